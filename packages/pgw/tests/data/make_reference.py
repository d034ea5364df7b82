"""Reference outputs of iclr25-pgw 0.1.2 (before the 0.2 refactor) on a few seeds."""
import sys

import numpy as np

from iclr25.pgw import mm_space, pgw, pgw_barycenter

out = {}
for seed in range(4):
    rng = np.random.default_rng(100 + seed)
    a = mm_space(rng.normal(size=(int(rng.integers(10, 31)), 2)))
    b = mm_space(rng.normal(size=(int(rng.integers(10, 31)), 2)))
    lam = float(rng.uniform(0.2, 3.0))
    out[f"s{seed}_Ca"] = a.C
    out[f"s{seed}_Cb"] = b.C
    out[f"s{seed}_lam"] = lam
    for method in ("fw-v1", "fw-v2"):
        r = pgw(a.C, b.C, a.p, b.p, lam, method=method)
        out[f"s{seed}_{method}_plan"] = r.plan
        out[f"s{seed}_{method}_terms"] = np.array([r.distance, r.transport_cost, r.penalty, r.mass, r.n_iter])
    r = pgw(a.C, b.C, a.p, b.p, lam, n_init=3, seed=seed)
    out[f"s{seed}_ninit3_terms"] = np.array([r.distance, r.transport_cost, r.penalty, r.mass, r.n_iter])
    r = pgw(a.C, b.C, a.p, b.p, lam, method="entropic")
    out[f"s{seed}_entropic_terms"] = np.array([r.distance, r.transport_cost, r.penalty, r.mass, r.n_iter])
rng = np.random.default_rng(7)
base = rng.normal(size=(12, 2))
sp = [mm_space(np.vstack([base + 0.05 * rng.normal(size=base.shape), rng.uniform(-4, 4, (2, 2))])) for _ in range(2)]
r = pgw_barycenter([s.C for s in sp], [s.p for s in sp], 1.0, n_points=10, mass=1.0, max_iter=5)
out["bary_C"] = r.C
out["bary_obj"] = r.objective
for k, s in enumerate(sp):
    out[f"bary_in{k}"] = s.C
np.savez(sys.argv[1], **out)
print({k: v for k, v in out.items() if k.endswith("terms")})
