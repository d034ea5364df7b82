"""The paper's claims that this package checks, decided over seeds (the registry of :mod:`iclr25.utils.claims`).

Rungs: ``"test"`` (seeds 0-2, the default test suite: the RK4 advection claim, milliseconds per seed) and
``"repro"`` (seeds 0-2, adding the intermediate-shape claim: one fit of the twisted bar per seed, about 30 s
each, which does not fit the default suite beside its seed-0 fixture tests).
"""

from __future__ import annotations

from iclr25.utils.claims import Claim, ClaimRegistry, Measurement

__all__ = ["REGISTRY"]

REGISTRY = ClaimRegistry("iclr25-implicit-deform", seeds={"test": (0, 1, 2), "repro": (0, 1, 2)})


@REGISTRY.measures(
    Claim("rk4-advection-keeps-the-flow",
          statement="advecting points through the velocity field with RK4 follows the flow; explicit Euler drifts",
          paper="RK4 integration of the explicit velocity field (Sec. 3)",
          metric="max |radius ratio - 1| after a quarter turn of a rotation field in 5 steps, 64 random points",
          baseline="explicit Euler, same steps", direction="lower", rule="every_seed", margin=0.1,
          note="Euler's drift is exactly (1 + (pi/10)^2)^2.5 - 1 = 0.265 at every point; RK4 about 1e-4; margin 0.1"),
)
def _rk4(seed: int, rung: str) -> dict[str, Measurement]:
    import jax.numpy as jnp  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415

    from .integrate import integrate  # noqa: PLC0415

    x0 = np.random.default_rng(seed).uniform(-1, 1, size=(64, 3))
    r0 = np.linalg.norm(x0[:, :2], axis=1)

    def drift(method: str) -> float:
        traj = integrate(lambda x, t: jnp.array([-x[1], x[0], 0.0]), jnp.asarray(x0), 5, method=method,
                         t1=np.pi / 2)
        return float(np.max(np.abs(np.linalg.norm(np.asarray(traj[-1])[:, :2], axis=1) / r0 - 1)))

    return {"rk4-advection-keeps-the-flow": Measurement(drift("rk4"), reference=drift("euler"))}


@REGISTRY.measures(
    Claim("intermediate-beats-sdf-blend",
          statement="the intermediate shape of the fitted deformation is closer to the true intermediate shape than "
                    "linear blending of the two SDFs",
          paper="lower Chamfer/Hausdorff than interpolation baselines (Tab. 1)",
          metric="Chamfer distance at t = 0.5, twisted bar, 'test' preset fit",
          baseline="SDF blend at t = 0.5", direction="lower", rule="every_seed", rungs=("repro",),
          note="margin 0: the seed-0 test asks for 0.7x the blend; decided at the repro rung (a fit per seed)"),
)
def _intermediate(seed: int, rung: str) -> dict[str, Measurement]:
    from . import DeformConfig, fit, make_pair  # noqa: PLC0415
    from .baselines import sdf_blend_mesh  # noqa: PLC0415
    from .experiment import score_meshes  # noqa: PLC0415

    pair = make_pair("bar", "twist", n_points=4000, mesh_resolution=48, seed=seed)
    model = fit(pair, config=DeformConfig.preset("test"), seed=seed, show_progress=False)
    t = 0.5
    ours = score_meshes("ours", [model.mesh(t, resolution=48)], pair, [t], n=5000)
    blend = sdf_blend_mesh(lambda x: pair.gt_sdf(x, 0.0, n_surface=30000),
                           lambda x: pair.gt_sdf(x, 1.0, n_surface=30000), t, (-1.0,) * 3, (1.0,) * 3, 48)
    base = score_meshes("blend", [blend], pair, [t], n=5000)
    return {"intermediate-beats-sdf-blend": Measurement(ours.at(t).chamfer, reference=base.at(t).chamfer,
                                                        extra={"hausdorff": ours.at(t).hausdorff,
                                                               "blend_hausdorff": base.at(t).hausdorff})}
