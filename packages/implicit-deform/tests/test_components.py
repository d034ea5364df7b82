"""Unit tests of the pieces: shapes and deformations, networks, metrics, baselines, file I/O, mesh export."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from iclr25.implicit_deform import (
    ImplicitNet,
    LipMLP,
    VelocityNet,
    chamfer,
    export_mesh,
    hausdorff,
    load_pair,
    make_pair,
    normal_consistency,
)
from iclr25.implicit_deform.baselines import cloud_sdf, straight_line_mesh
from iclr25.implicit_deform.metrics import point_mesh_distance
from iclr25.implicit_deform.shapes import capsule, rigid, rounded_bar, shear, torus, twist


@pytest.mark.parametrize("shape", [rounded_bar(), capsule(), torus()])
def test_shape_volumes_match_their_meshes(shape):
    assert abs(shape.mesh(64).volume / shape.volume - 1) < 0.01


@pytest.mark.parametrize("deform", [twist(), rigid(), shear()])
def test_deformations_preserve_volume_invert_and_match_their_velocity(deform):
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.5, 0.5, size=(50, 3))
    np.testing.assert_allclose(deform.inverse(deform.map(x, 0.7), 0.7), x, atol=1e-10)
    np.testing.assert_allclose(np.linalg.det(deform.jacobian(x, 0.6)), 1.0, atol=1e-6)
    h = 1e-5  # d/dt phi_t(x) at t = 0 is v(x); the flows are stationary, so also at t: v(phi_t(x))
    np.testing.assert_allclose((deform.map(x, 0.4 + h) - deform.map(x, 0.4 - h)) / (2 * h),
                               deform.velocity(deform.map(x, 0.4)), atol=1e-5)


def test_pair_ground_truth_and_correspondences():
    pair = make_pair("bar", "twist", n_points=1000, mesh_resolution=32, corr_fraction=0.05, seed=1)
    np.testing.assert_allclose(pair.corr_target, pair.deformation.map(pair.corr_source, 1.0))
    assert len(pair.corr) == round(0.05 * len(pair.source_vertices))
    # the target cloud lies on the exact final shape (point-to-mesh distance, no sampling floor)
    d = point_mesh_distance(pair.target_points, pair.gt_mesh(1.0))  # chords of a 32^3 mesh at the round edges
    assert d.mean() < 1e-3 and d.max() < 0.02
    assert abs(pair.gt_mesh(0.5).volume / pair.shape.volume - 1) < 0.01
    sdf = pair.gt_sdf(np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]), 0.5)
    assert sdf[0] == pytest.approx(-0.1, abs=0.01) and sdf[1] == pytest.approx(1.2, abs=0.01)


def test_geometric_init_is_a_sphere_for_every_t():
    net = ImplicitNet(64, 4, init_radius=0.5, key=jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (200, 3))
    x = 0.8 * x / jnp.linalg.norm(x, axis=1, keepdims=True)
    f0 = jax.vmap(net, in_axes=(0, None))(x, 0.0)
    f1 = jax.vmap(net, in_axes=(0, None))(x, 1.0)
    np.testing.assert_allclose(np.asarray(f0), np.asarray(f1), atol=1e-6)
    assert abs(float(jnp.mean(f0)) - 0.3) < 0.1  # |x| - r = 0.8 - 0.5


def test_velocity_net_starts_near_zero_and_lipmlp_bound_is_positive():
    v = VelocityNet(32, 3, key=jax.random.key(0))
    assert float(jnp.max(jnp.abs(v(jnp.ones(3), 0.0)))) < 0.1
    with pytest.raises(ValueError, match="activation must be one of"):
        VelocityNet(activation="gelu", key=jax.random.key(0))
    lip = LipMLP(16, 2, key=jax.random.key(0))
    assert float(lip.lipschitz_bound()) > 0


def test_metrics():
    a = np.random.default_rng(0).normal(size=(100, 3))
    assert chamfer(a, a) == 0.0 and hausdorff(a, a) == 0.0
    assert 0.0 < hausdorff(a, a + [0, 0, 0.5]) <= 0.5 + 1e-12
    assert hausdorff(np.zeros((1, 3)), np.array([[0.0, 0.0, 0.5], [0.0, 0.0, 0.1]])) == pytest.approx(0.5)
    assert normal_consistency(a, a, a, -a) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="a must be a non-empty"):
        chamfer(np.zeros((0, 3)), a)


def test_straight_line_interpolation_shrinks_the_twisted_bar():
    pair = make_pair("bar", "twist", n_points=500, mesh_resolution=48)
    m = straight_line_mesh(pair.source_vertices, pair.target_vertices, pair.source_faces, 0.5)
    loss = 1 - m.volume / pair.shape.volume
    assert 0.12 < loss < 0.22  # 1 - mean_z cos^2(theta(z)/2) = 0.18 for a 90 degree twist


def test_cloud_sdf_signs():
    pair = make_pair("capsule", "rigid", n_points=4000, mesh_resolution=32)
    s = cloud_sdf(pair.source_points, pair.source_normals, np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    assert s[0] < 0 < s[1]


def test_load_pair_from_files_and_export(tmp_path):
    import trimesh

    src = trimesh.creation.icosphere(subdivisions=2, radius=0.5)
    tgt = trimesh.Trimesh(src.vertices * [1.2, 1.0, 1 / 1.2], src.faces)
    export_mesh(src, tmp_path / "a.ply")
    export_mesh(tgt, tmp_path / "b.obj")
    np.save(tmp_path / "c.npy", np.stack([np.arange(10), np.arange(10)], axis=1))
    pair = load_pair(tmp_path / "a.ply", tmp_path / "b.obj", tmp_path / "c.npy", n_points=500)
    assert pair.source_points.shape == (500, 3) and pair.corr.shape == (10, 2)
    np.testing.assert_allclose(pair.corr_target, tgt.vertices[:10], atol=1e-6)
    assert not pair.has_ground_truth
    with pytest.raises(ValueError, match="mesh path must end in .ply or .obj"):
        export_mesh(src, tmp_path / "x.stl")


def test_old_module_path_experiment_still_imports_with_a_deprecation_warning():
    """``experiment`` became ``experiments`` in 0.4.1 (issue 49): the old path gives the same objects, warns once
    per import, and no file of the old name exists."""
    import subprocess
    import sys
    from pathlib import Path

    import iclr25.implicit_deform as pkg

    assert not (Path(pkg.__file__).parent / "experiment.py").exists()
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    from iclr25.implicit_deform.experiment import score_meshes\n"
            "except DeprecationWarning as w:\n    print('warned:', w)\n"
            "warnings.simplefilter('ignore')\n"
            "import iclr25.implicit_deform.experiments as new\n"
            "from iclr25.implicit_deform.experiment import score_meshes, MethodScores\n"
            "import iclr25.implicit_deform as pkg\n"
            "print(score_meshes is new.score_meshes, MethodScores is new.MethodScores,"
            " pkg.experiment.gt_meshes is new.gt_meshes)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "warned: iclr25.implicit_deform.experiment is deprecated: it is iclr25.implicit_deform.experiments" in out
    assert out.strip().endswith("True True True")
