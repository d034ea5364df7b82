"""Where one training iteration's time goes: the method's velocity and SDF iterations, part by part, beside one
LipMLP iteration, on one thread.

    python benchmarks/profile_step.py --out benchmarks [--preset repro] [--iters 50] [--repeats 5]

Every part is its own jitted ``lax.scan`` of ``--iters`` iterations over fresh random batches (as in training),
built from the package's own functions; the time per iteration is the median over ``--repeats`` calls after one
compiling call (compilation is left out), in CPU seconds of this process (one XLA thread: the work itself, steadier
than wall time on a loaded machine; wall time is recorded beside it). The parts:

* velocity iteration (``deform._velocity_chunk``: loss, gradient, Adam), and inside it: the loss alone (forward);
  the sampling of the batch; the correspondence-matching term (RK4 trajectories of the sampled correspondences)
  with its gradient; the regularisers (the regularisation points' trajectories, then v, div v and Lap v by nested
  forward-mode passes) with their gradient, and their two halves (the trajectories alone, forward; v, div v and
  Lap v at fixed points with their gradient); Adam's update.
* SDF iteration (``deform._sdf_chunk``: loss, gradient, Adam), and inside it: the loss alone (forward); the
  sampling and gathers of the batch; f with its input gradients (f, grad_x f, df/dt at every point of the batch,
  forward); f's softplus activations alone and its matrix products alone (forward, same sizes); the network's
  plain forward and backward on the same points (no input derivatives: what a LipMLP iteration does per point);
  the full loss's gradient without Adam; Adam's update.
* LipMLP iteration (``baselines._lip_chunk``) at the benchmark's batch.

Writes ``OUT/profile_step.json`` (``write_record``: load at start and end, date, machine). Stage-level times of
whole fits (pools, Python between chunks) come from ``benchmarks/train_time.py``. ``--docs`` measures nothing: it
rewrites the generated per-part tables in README.md (the main parts) and EVIDENCE.md (every part) from the
committed ``benchmarks/profile_step.json``.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from iclr25.utils.cli import enable_jax_compilation_cache

enable_jax_compilation_cache("implicit-deform", "ICLR25_IMPLICIT_DEFORM_JAX_CACHE")  # before JAX is imported

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

from iclr25.implicit_deform import DeformConfig, make_pair  # noqa: E402
from iclr25.implicit_deform import deform as D  # noqa: E402
from iclr25.implicit_deform import losses as L  # noqa: E402
from iclr25.implicit_deform.baselines import _lip_chunk  # noqa: E402
from iclr25.implicit_deform.integrate import integrate  # noqa: E402
from iclr25.implicit_deform.networks import ImplicitNet, LipMLP, VelocityNet, softplus_beta  # noqa: E402
from iclr25.utils.bench import benchmark_parser, blas_info, cpu_model, write_record  # noqa: E402

GROUPS = ("velocity", "SDF", "LipMLP")


def _tree_sum(tree) -> jax.Array:
    return sum(jnp.sum(x) for x in jax.tree_util.tree_leaves(tree))


def _noisy(tree, key):
    """``tree`` times a random scalar: an input that changes every iteration, so that XLA cannot hoist the work
    out of the loop."""
    return jax.tree_util.tree_map(lambda a: a * jax.random.uniform(key, ()), tree)


def _scan(part, n: int):
    """A jitted scan running ``part(params, key) -> scalar`` n times on fresh keys (the sum is carried, so
    nothing is dead code)."""

    @jax.jit
    def run(params, key):
        def body(carry, _):
            acc, k = carry
            k, sub = jax.random.split(k)
            return (acc + part(params, sub), k), None

        (acc, _), _ = jax.lax.scan(body, (jnp.zeros(()), key), None, length=n)
        return acc

    return run


def _time(fn, n: int, repeats: int) -> dict[str, float]:
    """Seconds per iteration over ``repeats`` timed calls after one compiling call: the median of the process's
    CPU time (one thread, so it is the work itself, steadier than wall time on a loaded machine) and of wall time."""
    t_c = time.perf_counter()
    jax.block_until_ready(fn())
    print(f"  (first call {time.perf_counter() - t_c:.1f} s)", end="", flush=True)
    cpu, wall = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        jax.block_until_ready(fn())
        cpu.append((time.process_time() - c0) / n)
        wall.append((time.perf_counter() - t0) / n)
    print(f" {statistics.median(cpu) * 1e3:.3f} ms/it CPU, {statistics.median(wall) * 1e3:.3f} wall", flush=True)
    return {"cpu_s": statistics.median(cpu), "cpu_min_s": min(cpu), "cpu_max_s": max(cpu),
            "wall_s": statistics.median(wall)}


def profile(preset: str, n: int, repeats: int, lip_batch: int, groups: tuple[str, ...]
            ) -> tuple[dict[str, dict[str, float]], int]:
    cfg = DeformConfig.preset(preset)
    pair = make_pair("bar", "twist", n_points=20000, mesh_resolution=64)
    src, tgt = pair.source_points, pair.target_points
    center, scale = D.normalisation(src, tgt)
    rng = np.random.default_rng(0)
    pool_idx = rng.choice(len(src), size=min(cfg.pool, len(src)), replace=False)
    corr = (pair.corr_source, pair.corr_target)
    data1 = D._velocity_data(src[pool_idx], tgt, corr, center, scale)
    static_cfg, w = D._split_config(cfg)
    k_sdf, k_vel, key = jax.random.split(jax.random.key(0), 3)
    vel_net = VelocityNet(cfg.vel_width, cfg.vel_depth, activation=cfg.vel_activation, key=k_vel)
    sdf_net = ImplicitNet(cfg.sdf_width, cfg.sdf_depth, beta=cfg.beta, init_radius=cfg.init_radius, key=k_sdf)
    data2 = D._sdf_data(vel_net, src[pool_idx], pool_idx, tgt, pair.source_normals, pair.target_normals, rng,
                        center, scale, cfg, static_cfg)
    vp, vs = eqx.partition(vel_net, eqx.is_inexact_array)
    sp, ss = eqx.partition(sdf_net, eqx.is_inexact_array)
    opt = D._optimizer(static_cfg, 0)
    off = jnp.int32(0)
    T, dt = cfg.n_steps, 1.0 / cfg.n_steps
    out: dict[str, dict[str, float]] = {}

    def rec(name: str, fn, params=None) -> None:
        if name.split(":")[0] in groups:
            print(name, end="", flush=True)
            out[name] = _time(fn if params is None else (lambda: fn(params, key)), n, repeats)

    # ---------------------------------------------------------------- velocity iteration
    v_state = opt.init(vp)
    rec("velocity: whole iteration",
        lambda: D._velocity_chunk(vp, vs, v_state, key, data1, w, n, static_cfg, off)[0])
    rec("velocity: loss, forward only",
        _scan(lambda p, k: D._velocity_loss(p, vs, data1, k, w, static_cfg)[0], n), vp)

    def v_sample(p, k):
        k1, _, k3, k4 = jax.random.split(k, 4)
        i_c = jax.random.randint(k1, (min(cfg.batch, data1["corr_src"].shape[0]),), 0, data1["corr_src"].shape[0])
        i_r = jax.random.randint(k3, (cfg.n_reg,), 0, data1["src"].shape[0])
        u = jax.random.uniform(k4, (max(1, cfg.n_reg // 2), 3), minval=data1["lo"], maxval=data1["hi"])
        return jnp.sum(data1["corr_src"][i_c]) + jnp.sum(data1["corr_tgt"][i_c]) + jnp.sum(data1["src"][i_r]) + jnp.sum(u)

    rec("velocity: sampling", _scan(v_sample, n), vp)

    def match(p, k):
        v = eqx.combine(p, vs)
        i_c = jax.random.randint(k, (min(cfg.batch, data1["corr_src"].shape[0]),), 0, data1["corr_src"].shape[0])
        traj = integrate(v, data1["corr_src"][i_c], T, method=cfg.integrator)
        return w["w_match"] * L.matching(traj[-1], data1["corr_tgt"][i_c])

    def reg_points(p, k):
        v = eqx.combine(p, vs)
        k3, k4 = jax.random.split(k)
        i_r = jax.random.randint(k3, (cfg.n_reg,), 0, data1["src"].shape[0])
        u = jax.random.uniform(k4, (max(1, cfg.n_reg // 2), 3), minval=data1["lo"], maxval=data1["hi"])
        reg_traj = integrate(v, jnp.concatenate([data1["src"][i_r], u]), T, method=cfg.integrator)[:-1]
        return jax.lax.stop_gradient(reg_traj.reshape(-1, 3)), reg_traj.shape[1]

    def reg_terms(p, x, n_pts):
        v = eqx.combine(p, vs)
        t = jnp.repeat(jnp.arange(T, dtype=jnp.float32) * dt, n_pts)
        vel, div, lap = L.divergence_and_laplacian(v, x, t)
        smooth = jnp.mean(jnp.sum((dt * (vel - w["smooth_alpha"] * lap)) ** 2, axis=-1))
        return w["w_smooth"] * smooth + w["w_div"] * jnp.mean((dt * div) ** 2)

    def reg(p, k):
        x, n_pts = reg_points(p, k)
        return reg_terms(p, x, n_pts)

    def grad_of(fn):
        return lambda p, k: _tree_sum(jax.grad(fn)(p, k))

    rec("velocity: matching term + gradient",
        _scan(grad_of(match), n), vp)
    rec("velocity: div and Lap terms + gradient",
        _scan(grad_of(reg), n), vp)
    rec("velocity: div and Lap terms, their trajectories (forward)",
        _scan(lambda p, k: jnp.sum(reg_points(p, k)[0]), n), vp)
    x_fixed, n_fixed = reg_points(vp, key)
    rec("velocity: div and Lap terms at fixed points + gradient",
        _scan(lambda p, k: _tree_sum(jax.grad(
            lambda q: reg_terms(q, x_fixed + 1e-6 * jax.random.uniform(k, ()), n_fixed))(p)), n), vp)
    g_v = jax.tree_util.tree_map(lambda a: 1e-3 * jnp.ones_like(a), vp)
    rec("velocity: Adam", _scan(
        lambda p, k: _tree_sum(opt.update(_noisy(g_v, k), v_state, p)[0]), n), vp)

    # ---------------------------------------------------------------- SDF iteration
    s_state = opt.init(sp)
    w_on = jnp.float32(cfg.w_onsurf)
    rec("SDF: whole iteration",
        lambda: D._sdf_chunk(sp, ss, s_state, key, data2, w, w_on, n, static_cfg, off)[0])
    rec("SDF: loss, forward only",
        _scan(lambda p, k: D._sdf_loss(p, ss, data2, k, w, w_on, static_cfg)[0], n), sp)
    def s_batch(k):
        b = D._sdf_batch(data2, k, static_cfg)
        return b["x"], b["t"], b["vel"], b["jac"]

    n_points = int(s_batch(key)[0].shape[0])
    rec("SDF: sampling", _scan(
        lambda p, k: sum(jnp.sum(a) for a in s_batch(k)), n), sp)

    def f_grads(p, k):
        x, t, _, _ = s_batch(k)
        val, gx, gt = L.sdf_and_gradients(eqx.combine(p, ss), x, t)
        return jnp.sum(val) + jnp.sum(gx) + jnp.sum(gt)

    rec("SDF: f, ∇f, ∂f/∂t (forward)", _scan(f_grads, n), sp)

    def plain(p, k):
        x, t, _, _ = s_batch(k)
        return jnp.mean(jax.vmap(eqx.combine(p, ss))(x, t) ** 2)

    z = 0.05 * jax.random.normal(key, (len(sdf_net.weights) - 1, n_points, cfg.sdf_width))
    rec("SDF: f's softplus activations alone (forward)", _scan(
        lambda p, k: jnp.sum(softplus_beta(z + 1e-6 * jax.random.uniform(k, ()), cfg.beta)), n), sp)
    hs = [jax.random.normal(key, (n_points, wi.shape[1])) for wi in sdf_net.weights]
    rec("SDF: f's matrix products alone (forward)", _scan(
        lambda p, k: sum(jnp.sum((h + 1e-6 * jax.random.uniform(k, ())) @ wi.T) for h, wi in zip(hs, p.weights)),
        n), sp)
    rec("SDF: f alone, forward + backward",
        _scan(grad_of(plain), n), sp)
    rec("SDF: loss + gradient", _scan(
        grad_of(lambda p, k: D._sdf_loss(p, ss, data2, k, w, w_on, static_cfg)[0]), n), sp)
    g_s = jax.tree_util.tree_map(lambda a: 1e-3 * jnp.ones_like(a), sp)
    rec("SDF: Adam", _scan(
        lambda p, k: _tree_sum(opt.update(_noisy(g_s, k), s_state, p)[0]), n), sp)

    # ---------------------------------------------------------------- LipMLP iteration
    lip = LipMLP(cfg.sdf_width, cfg.sdf_depth, key=jax.random.key(0))
    lp, ls = eqx.partition(lip, eqx.is_inexact_array)
    m = 30000
    ldata = {"x": jax.random.uniform(key, (m, 3), minval=-1.0, maxval=1.0), "t": jnp.zeros((m,)),
             "s": jnp.zeros((m,)), "batch": jnp.zeros((lip_batch,))}
    l_state = optax.adam(1e-3).init(lp)
    rec("LipMLP: whole iteration",
        lambda: _lip_chunk(lp, ls, l_state, key, ldata, jnp.float32(1e-10), n, 1e-3)[0])
    return out, n_points


#: the parts the README shows (EVIDENCE.md shows every part)
README_PARTS = ("velocity: whole iteration", "velocity: div and Lap terms + gradient", "SDF: whole iteration",
                "SDF: f alone, forward + backward", "LipMLP: whole iteration")
SOURCE = "benchmarks/profile_step.json"
BEGIN = f"<!-- step-profile:begin source={SOURCE} (generated by `python benchmarks/profile_step.py --docs`; do not edit) -->"
END = "<!-- step-profile:end -->"


def profile_table(record: dict, parts: tuple[str, ...] | None = None) -> str:
    """Markdown: CPU ms per iteration of each part and its share of its own iteration (velocity, SDF, LipMLP)."""
    measured = record["parts_s_per_iteration"]
    whole = {name.split(":")[0]: r["cpu_s"] for name, r in measured.items() if "whole iteration" in name}
    lines = ["| part of one iteration | CPU ms | share of its iteration |", "|---|---|---|"]
    for name, r in measured.items():
        if parts is not None and name not in parts:
            continue
        share = r["cpu_s"] / whole[name.split(":")[0]] * 100
        lines.append(f"| {name} | {r['cpu_s'] * 1e3:.2f} | {share:.0f} % |")
    return ("\n".join(lines) + f"\n\nCPU time, medians of {record['repeats']} calls of {record['iters_per_call']} "
            f"iterations, one XLA thread; batches of {record['sdf_batch_points']} (SDF) and {record['lip_batch']} "
            f"(LipMLP) points; {record['machine']['cpu']}; load {record['load_start']:.2f} → "
            f"{record['load_end']:.2f}; {record['date']}; `{record['command']}`. Parts are timed "
            "alone.")


def write_docs() -> None:
    pkg = Path(__file__).resolve().parents[1]
    record = json.loads((pkg / SOURCE).read_text(encoding="utf-8"))
    for doc, parts in (("README.md", README_PARTS), ("EVIDENCE.md", None)):
        path = pkg / doc
        text = path.read_text(encoding="utf-8")
        block = f"{BEGIN}\n{profile_table(record, parts)}\n{END}"
        pattern = re.compile(re.escape(BEGIN.split(" source=")[0]) + r".*?" + re.escape(END), re.S)
        if not pattern.search(text):
            print(f"{doc}: no step-profile block, left alone")
            continue
        path.write_text(pattern.sub(lambda _, b=block: b, text), encoding="utf-8")
        print(f"rewrote the step-profile table in {doc}")


def main() -> None:
    p = benchmark_parser(__doc__, out="benchmarks", raw=True)
    p.add_argument("--preset", default="repro")
    p.add_argument("--iters", type=int, default=50, help="iterations per timed call (default 50, one chunk)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--lip-batch", type=int, default=1024)
    p.add_argument("--only", nargs="+", choices=GROUPS, default=list(GROUPS), help="parts to time (default: all)")
    p.add_argument("--docs", action="store_true",
                   help="measure nothing: rewrite the README's and EVIDENCE.md's tables from " + SOURCE)
    args = p.parse_args()
    if args.docs:
        write_docs()
        return
    load_start = os.getloadavg()[0]
    parts, n_points = profile(args.preset, args.iters, args.repeats, args.lip_batch, tuple(args.only))
    record = {"kind": "profile", "command": "python benchmarks/profile_step.py " + " ".join(sys.argv[1:]),
              "preset": args.preset, "iters_per_call": args.iters, "repeats": args.repeats,
              "lip_batch": args.lip_batch, "sdf_batch_points": n_points, "jax": jax.__version__,
              "xla_flags": os.environ.get("XLA_FLAGS", ""),
              "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "blas": blas_info()},
              "parts_s_per_iteration": parts}
    path = write_record(args.out / "profile_step.json", record, load_start=load_start)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
