"""The paper's claims at small scale (seeded): the sign of the extra level-set term, divergence-free fields,
RK4 against Euler, marching cubes of a fitted SDF, and the intermediate shape against the SDF blend."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from iclr25.implicit_deform import (
    divergence,
    divergence_loss,
    integrate,
    laplacian,
    levelset_residual,
    marching_cubes_sdf,
    mlse_residual,
)
from iclr25.implicit_deform.claims import REGISTRY
from iclr25.implicit_deform.losses import divergence_and_laplacian, sdf_and_gradients
from iclr25.implicit_deform.metrics import mesh_chamfer

A, R0 = 0.7, 0.45


def sphere_f(x, t):
    return jnp.linalg.norm(x) - R0 * jnp.exp(A * t)


def sphere_v(x, t):
    return A * x


def _points(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 3)).astype(np.float32)
    t = rng.uniform(0, 1, size=n).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(t)


def test_mlse_term_vanishes_for_the_expanding_sphere_with_the_package_sign():
    x, t = _points()
    f = jax.vmap(sphere_f)(x, t)
    r_ok = mlse_residual(sphere_f, sphere_v, x, t)  # package default: sign -1, coef 1
    assert float(jnp.max(jnp.abs(r_ok))) < 1e-5
    # the reference's sign (+) and the ordinary level-set equation both leave a residual proportional to f
    r_plus = mlse_residual(sphere_f, sphere_v, x, t, sign=1.0, coef=1.0)
    np.testing.assert_allclose(np.asarray(r_plus), np.asarray(2 * A * f), atol=1e-5)
    assert float(jnp.mean(jnp.abs(r_plus))) > 0.1
    r_olse = mlse_residual(sphere_f, sphere_v, x, t, coef=0.0)
    np.testing.assert_allclose(np.asarray(r_olse), np.asarray(A * f), atol=1e-5)


def test_levelset_residual_from_precomputed_jacobian_matches_callables():
    x, t = _points(50, seed=1)
    val, gx, gt = sdf_and_gradients(sphere_f, x, t)
    jac = jnp.broadcast_to(A * jnp.eye(3), (50, 3, 3))
    r = levelset_residual(val, gx, gt, A * x, jac, sign=1.0, coef=0.1)
    np.testing.assert_allclose(np.asarray(r), np.asarray(mlse_residual(sphere_f, sphere_v, x, t, sign=1.0,
                                                                       coef=0.1)), atol=1e-6)


def twist_v(x, t):
    k = np.pi / 2 / 1.6
    return k * (x[2] + 0.8) * jnp.array([-x[1], x[0], 0.0])


def test_divergence_loss_is_zero_for_a_divergence_free_field_and_not_otherwise():
    x, t = _points()
    assert float(divergence_loss(twist_v, x, t)) < 1e-10
    np.testing.assert_allclose(np.asarray(divergence(sphere_v, x, t)), 3 * A, rtol=1e-6)
    assert float(divergence_loss(sphere_v, x, t)) == pytest.approx(9 * A**2, rel=1e-5)


def test_fused_divergence_and_laplacian_match_jacfwd_and_hessian():
    def v(x, t):
        return jnp.array([jnp.sin(x[0]) * x[1] ** 2, jnp.exp(0.3 * x[2]) * x[0], x[0] * x[1] * x[2] + t])

    x, t = _points(20, seed=2)
    vel, div, lap = divergence_and_laplacian(v, x, t)
    np.testing.assert_allclose(np.asarray(div), np.asarray(divergence(v, x, t)), atol=1e-5)
    np.testing.assert_allclose(np.asarray(lap), np.asarray(laplacian(v, x, t)), atol=1e-5)
    # analytic Laplacian: (-sin(x0) x1^2 + 2 sin(x0), 0.09 exp(0.3 x2) x0, 0)
    xn = np.asarray(x)
    ref = np.stack([-np.sin(xn[:, 0]) * xn[:, 1] ** 2 + 2 * np.sin(xn[:, 0]),
                    0.09 * np.exp(0.3 * xn[:, 2]) * xn[:, 0], np.zeros(20)], axis=1)
    np.testing.assert_allclose(np.asarray(lap), ref, atol=1e-4)


def rotation(x, t):
    return jnp.array([-x[1], x[0], 0.0])


def test_rk4_keeps_the_radius_on_a_rotation_field_euler_does_not():
    x0 = jnp.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.3]])
    r0 = np.linalg.norm(np.asarray(x0)[:, :2], axis=1)
    ends = {}
    for method in ("euler", "midpoint", "rk4"):
        traj = integrate(rotation, x0, 5, method=method, t1=np.pi / 2)
        ends[method] = np.linalg.norm(np.asarray(traj[-1])[:, :2], axis=1) / r0
    # Euler: radius x sqrt(1 + (pi/10)^2)^5 = 1.265 for 90 degrees in 5 steps
    np.testing.assert_allclose(ends["euler"], (1 + (np.pi / 10) ** 2) ** 2.5, rtol=1e-5)
    assert np.all(np.abs(ends["rk4"] - 1) < 1e-3)
    assert np.all(np.abs(ends["rk4"] - 1) < 0.01 * np.abs(ends["euler"] - 1))
    assert np.all(np.abs(ends["midpoint"] - 1) < np.abs(ends["euler"] - 1))


def test_euler_volume_drift_on_a_divergence_free_field_is_measured():
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.5)
    v0 = sphere.volume
    drift = {}
    for method in ("euler", "rk4"):
        moved = np.asarray(integrate(rotation, jnp.asarray(sphere.vertices, dtype=jnp.float32), 5, method=method,
                                     t1=np.pi / 2)[-1])
        drift[method] = abs(trimesh.Trimesh(moved, sphere.faces, process=False).volume / v0 - 1)
    assert drift["euler"] > 0.5  # 1.265^2 - 1 = 0.6: area grows in the rotation plane
    assert drift["rk4"] < 5e-3


def test_marching_cubes_of_the_exact_sdf_matches_the_shape(twist_pair):
    mesh = marching_cubes_sdf(twist_pair.shape.sdf, (-1.0,) * 3, (1.0,) * 3, 48)
    assert mesh_chamfer(mesh, twist_pair.gt_mesh(0.0))[0] < 2e-3


def test_marching_cubes_of_the_fitted_initial_sdf_is_within_1e_2(twist_fit, twist_pair):
    mesh = twist_fit.mesh(0.0, resolution=48)
    assert mesh_chamfer(mesh, twist_pair.gt_mesh(0.0))[0] < 1e-2


def test_the_shipped_checkpoint_is_the_seed_0_fit_of_its_pair(twist_fit, shipped_fit):
    """The shipped .npz is what fit() makes today (same config, pair and seed): a changed preset or training code
    fails here until `python -m iclr25.implicit_deform.pretrained bar-twist --out ...` is run again."""
    from iclr25.implicit_deform.pretrained import PRETRAINED, pretrained_meta

    spec = PRETRAINED["bar-twist"]
    assert shipped_fit.config == spec.config() == twist_fit.config
    meta = pretrained_meta("bar-twist")
    assert meta["seed"] == 0 and meta["command"] == spec.command
    assert sorted(shipped_fit.history) == sorted(twist_fit.history)
    # Same code and config: the first steps of the first two stages agree to float32 rounding on any CPU (measured
    # max relative difference 6e-6 between the x86_64 machine that made the file and an AMD EPYC), so a changed
    # preset, loss or optimiser fails here.
    for stage in ("velocity", "sdf"):
        for name, curve in shipped_fit.history[stage].items():
            np.testing.assert_allclose(np.asarray(twist_fit.history[stage][name])[:10], np.asarray(curve)[:10],
                                       rtol=1e-4, err_msg=f"{stage} {name}: the first 10 steps differ")
    # Over 600 + 100 steps XLA's CPU kernels round differently per instruction set, and the SDF drifts: the
    # AMD EPYC fit differs from the shipped one by up to 0.0042 (mean |SDF| 0.39); the velocity field by 4e-7.
    x = np.random.default_rng(0).uniform(-0.9, 0.9, size=(2000, 3))
    for t in (0.0, 0.5, 1.0):
        np.testing.assert_allclose(shipped_fit.sdf(x, t), twist_fit.sdf(x, t), atol=0.02)
    np.testing.assert_allclose(shipped_fit.advect(x, 1.0), twist_fit.advect(x, 1.0), atol=1e-4)


def test_result_save_load_roundtrip_and_bad_files(tmp_path, shipped_fit):
    from iclr25.implicit_deform.checkpoint import load_result, save_result
    from iclr25.utils.io import DataFileError

    path = save_result(shipped_fit, tmp_path / "r.npz", meta={"note": "x"})
    back = load_result(path)
    x = np.random.default_rng(1).uniform(-0.5, 0.5, size=(100, 3))
    np.testing.assert_array_equal(back.sdf(x, 0.3), shipped_fit.sdf(x, 0.3))
    np.testing.assert_array_equal(back.history["sdf"]["loss"], shipped_fit.history["sdf"]["loss"])
    with pytest.raises(ValueError, match="must end in .npz"):
        save_result(shipped_fit, tmp_path / "r.pkl")
    np.savez(tmp_path / "bad.npz", format=np.array("something else"), config=np.array("{}"), meta=np.array("{}"),
             center=np.zeros(3), scale=np.array(1.0))
    with pytest.raises(DataFileError, match="bad.npz: format"):
        load_result(tmp_path / "bad.npz")


# The claims of iclr25.implicit_deform.claims decided over seeds 0-2 (the intermediate-shape claim at the repro
# rung: one fit per seed).
test_claim = REGISTRY.pytest_test("test")

# the committed claims.json and claims-calibration.json against this registry and the installed version
test_committed_claims = REGISTRY.pytest_committed_test(Path(__file__).parents[1])
