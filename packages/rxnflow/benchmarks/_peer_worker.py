"""One process of the torchgfn side-by-side (``torchgfn_peer.py`` starts it; it is not run on its own).

Both sides solve the same synthetic synthesis MDP, generated from one seed with numpy's PCG64 stream (identical
under numpy 1.26 in the peer's environment and numpy 2.x here; a checksum of the problem is printed and compared):

* ``n_blocks`` blocks with synthetic features (1,191 fingerprint bits at density 0.05 + 8 descriptors, the
  layout of this package's block features); 8 bimolecular protocols, each compatible with a random third of
  the blocks;
* s0 (empty) -> pick a first block b1 -> stop, or (protocol p, block b2 in pool p) -> forced stop (at most 2
  blocks). A state is (b1, p, b2), so the DAG is a tree and P_B = 1 on both sides;
* log R(b1) = u[b1], log R(b1, p, b2) = (u[b1] + u[b2]) / 2 + v[p], beta = 4;
* state features: OR of the blocks' bits (padded to 2,048) and the mean descriptors (2,056 inputs), as in
  this package's fingerprint state encoder.

``ours``: this package's ``RxnFlowPolicy`` and subsampler (``draw_subsets``, importance weights
``log(|A_i|/n_i)``, Gumbel-max sampling on the weighted logits), on-policy TB with a learned log Z.
``torchgfn``: torchgfn's ``DiscreteEnv`` over the flattened action space
``[first block (n_blocks)] + [(protocol, compatible block) pairs] + [exit]``, a ``DiscretePolicyEstimator``
whose module has the same layers and parameter names as ``RxnFlowPolicy`` (so the same state encoder size; the
parameter count is printed), ``TBGFlowNet`` with ``constant_pb=True`` (tree DAG) and a learned scalar log Z,
``sample_trajectories(save_logprobs=True)`` + ``loss(recalculate_all_logprobs=False)`` (its on-policy fast path).

Argv: ``ours|torchgfn N_BLOCKS RHO STEPS [check OUT.pt]``. Prints one JSON line.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time

import numpy as np
import torch
from torch import nn

N_BI, BITS, DESC, STATE_BITS, BATCH, BETA, N_COND, MAX_LEN = 8, 1191, 8, 2048, 64, 4.0, 16, 2


def problem(n_blocks: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    # row chunks (the same PCG64 stream as one call) keep the setup's float64 transient small, so peak RSS
    # measures the training steps, not the problem generation
    bits = np.concatenate([(rng.random((min(2048, n_blocks - i), BITS)) < 0.05).astype(np.uint8)
                           for i in range(0, n_blocks, 2048)])
    desc = rng.random((n_blocks, DESC)).astype(np.float32)
    pools = [np.sort(rng.choice(n_blocks, max(n_blocks // 3, 1), replace=False)) for _ in range(N_BI)]
    u = rng.normal(size=n_blocks).astype(np.float32)
    v = (0.5 * rng.normal(size=N_BI)).astype(np.float32)
    h = hashlib.sha1()
    for a in (bits, desc, *pools, u, v):
        h.update(np.ascontiguousarray(a).tobytes())
    return torch.from_numpy(bits), torch.from_numpy(desc), [torch.from_numpy(p) for p in pools], \
        torch.from_numpy(u), torch.from_numpy(v), h.hexdigest()[:12]


def state_features(bits, desc, b1, b2):
    """(B, 2056) features of states (b1, b2), -1 = no block."""
    m1, m2 = (b1 >= 0), (b2 >= 0)
    x = torch.maximum(bits[b1.clamp(min=0)] * m1[:, None], bits[b2.clamp(min=0)] * m2[:, None]).float()
    x = nn.functional.pad(x, (0, STATE_BITS - BITS))
    n = (m1.float() + m2.float()).clamp(min=1)[:, None]
    d = (desc[b1.clamp(min=0)] * m1[:, None] + desc[b2.clamp(min=0)] * m2[:, None]) / n
    return torch.cat([x, d], 1)


def thermometer(beta, n=N_COND, vmax=64.0):
    k = torch.arange(n, dtype=torch.float32)
    return (beta[:, None] / vmax * n - k[None]).clamp(0, 1)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------------------------------- ours
def run_ours(n_blocks, rho, steps, bits, desc, pools, u, v):
    from iclr25.rxnflow.estimator import draw_subsets
    from iclr25.rxnflow.gflownet import _choose
    from iclr25.rxnflow.model import PolicyConfig, RxnFlowPolicy

    pol = RxnFlowPolicy(PolicyConfig(n_uni=0, n_bi=N_BI, max_len=MAX_LEN))
    zp = list(pol.log_z.parameters())
    zi = {id(p) for p in zp}
    opt = torch.optim.Adam([{"params": [p for p in pol.parameters() if id(p) not in zi], "lr": 1e-3},
                            {"params": zp, "lr": 0.05}], foreach=True)
    rng = np.random.default_rng(1)
    pools_np = [p.numpy() for p in pools]
    sizes = [n_blocks] + [len(p) for p in pools_np]
    beta = torch.full((BATCH,), BETA)

    def step():
        sub = draw_subsets(sizes, rho, rng, min_sampling=100)
        ids = [sub.index[0]] + [p[i] for p, i in zip(pools_np, sub.index[1:])]
        union = np.unique(np.concatenate(ids))
        tu = torch.from_numpy(union)
        e = pol.embed_blocks(torch.cat([bits[tu].float(), desc[tu]], 1))
        es = [e[torch.from_numpy(np.searchsorted(union, i))] for i in ids]
        cond = pol.cond(beta)
        scale = pol.logit_scale(cond)
        none = torch.full((BATCH,), -1, dtype=torch.long)
        h0 = pol.encode(state_features(bits, desc, none, none), torch.zeros(BATCH, dtype=torch.long), cond)
        L0 = pol.first_logits(h0, es[0]) * scale
        W0 = L0 + float(sub.log_weight[0])
        a = torch.from_numpy(_choose(W0.detach().numpy(), [np.arange(len(ids[0]))], rng, 0.0))
        ar = torch.arange(BATCH)
        logpf = (L0[ar, a] - torch.logsumexp(W0, 1)).clamp(max=0)
        b1 = torch.from_numpy(ids[0])[a]
        h1 = pol.encode(state_features(bits, desc, b1, none), torch.ones(BATCH, dtype=torch.long), cond)
        q = pol.bi_queries(h1)
        L1 = torch.cat([pol.stop_logits(h1)[:, None]] + [q[:, j] @ es[1 + j].T for j in range(N_BI)], 1) * scale
        widths = [1] + [len(i) for i in ids[1:]]
        off = np.concatenate([[0], np.cumsum(widths)])
        cw = torch.cat([torch.zeros(1)] + [torch.full((len(i),), float(w)) for i, w in zip(ids[1:], sub.log_weight[1:])])
        W1 = L1 + cw
        groups = [np.arange(off[g], off[g + 1]) for g in range(len(widths))]
        c = _choose(W1.detach().numpy(), groups, rng, 0.0)
        logpf = logpf + (L1[ar, torch.from_numpy(c)] - torch.logsumexp(W1, 1)).clamp(max=0)
        logr = u[b1].clone()
        go = np.flatnonzero(c > 0)
        if len(go):
            j = np.searchsorted(off, c[go], side="right") - 2
            b2 = np.array([ids[1 + jj][cc - off[1 + jj]] for jj, cc in zip(j, c[go])])
            logr[go] = 0.5 * (u[b1[go]] + u[torch.from_numpy(b2)]) + v[torch.from_numpy(j)]
        logz = pol.log_z(cond)[:, 0]
        loss = ((logz + logpf - BETA * logr) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(pol.parameters(), 10.0)
        opt.step()
        return float(loss.detach())

    return pol, step


# ----------------------------------------------------------------------------------------------- torchgfn
def run_torchgfn(n_blocks, rho, steps, bits, desc, pools, u, v):
    from gfn.env import DiscreteEnv
    from gfn.estimators import DiscretePolicyEstimator
    from gfn.gflownet import TBGFlowNet
    from gfn.preprocessors import Preprocessor
    from gfn.states import DiscreteStates

    if rho != 1.0:
        raise ValueError("torchgfn has no action-space subsampling: rho must be 1")
    sizes = [len(p) for p in pools]
    n_bi_act = sum(sizes)
    n_actions = n_blocks + n_bi_act + 1
    act_proto = torch.cat([torch.full((s,), j, dtype=torch.long) for j, s in enumerate(sizes)])
    act_block = torch.cat(pools).long()
    cond0 = thermometer(torch.tensor([BETA]))[0]

    class SynthEnv(DiscreteEnv):
        def __init__(self):
            super().__init__(n_actions, torch.full((3,), -1, dtype=torch.long), (3,),
                             sf=torch.full((3,), -2, dtype=torch.long))

        def make_states_class(self):
            env = self

            class SynthStates(DiscreteStates):
                state_shape = env.state_shape
                s0 = env.s0
                sf = env.sf
                make_random_states = env.make_random_states
                n_actions = env.n_actions

                def _compute_forward_masks(self):
                    t = self.tensor.reshape(-1, 3)
                    m = torch.zeros(t.shape[0], n_actions, dtype=torch.bool)
                    d0, d1 = (t[:, 0] == -1), (t[:, 0] >= 0) & (t[:, 1] == -1)
                    m[d0, :n_blocks] = True
                    m[d1, n_blocks:-1] = True
                    m[(t[:, 0] >= 0), -1] = True  # stop after 1 block (min_len 1); forced after 2
                    return m.reshape(*self.batch_shape, n_actions)

                def _compute_backward_masks(self):
                    t = self.tensor.reshape(-1, 3)
                    m = torch.zeros(t.shape[0], n_actions - 1, dtype=torch.bool)
                    one = (t[:, 0] >= 0) & (t[:, 1] == -1)
                    two = t[:, 1] >= 0
                    r1 = torch.nonzero(one)[:, 0]
                    m[r1, t[r1, 0]] = True
                    r2 = torch.nonzero(two)[:, 0]
                    if len(r2):
                        # the flat index of (p, b2)
                        starts = torch.tensor([0] + list(np.cumsum(sizes)[:-1]))
                        pos = torch.stack([torch.searchsorted(pools[int(p)], b) for p, b in zip(t[r2, 1], t[r2, 2])])
                        m[r2, n_blocks + starts[t[r2, 1]] + pos] = True
                    return m.reshape(*self.batch_shape, n_actions - 1)

            return SynthStates

        def step(self, states, actions):
            t = states.tensor.clone()
            a = actions.tensor[..., 0]
            first = t[:, 0] == -1
            t[first, 0] = a[first]
            k = a[~first] - n_blocks
            t[~first, 1] = act_proto[k]
            t[~first, 2] = act_block[k]
            return self.States(t)

        def backward_step(self, states, actions):
            t = states.tensor.clone()
            two = t[:, 1] >= 0
            t[two, 1:] = -1
            t[~two, 0] = -1
            return self.States(t)

        def log_reward(self, final_states):
            t = final_states.tensor
            one = t[:, 1] == -1
            lr = torch.where(one, u[t[:, 0].clamp(min=0)],
                             0.5 * (u[t[:, 0].clamp(min=0)] + u[t[:, 2].clamp(min=0)]) + v[t[:, 1].clamp(min=0)])
            return BETA * lr

        def reward(self, final_states):
            return torch.exp(self.log_reward(final_states))

    class Features(Preprocessor):
        """state (b1, p, b2) -> [fingerprint features, depth one-hot, condition] (the state encoder's input)."""

        def __init__(self):
            super().__init__(output_dim=None)

        def preprocess(self, states):
            t = states.tensor.reshape(-1, 3)
            depth = (t[:, 0] >= 0).long() + (t[:, 1] >= 0).long()
            x = state_features(bits, desc, t[:, 0], t[:, 2])
            oh = nn.functional.one_hot(depth, MAX_LEN + 1).float()
            return torch.cat([x, oh, cond0.expand(len(t), -1)], 1)

    class Policy(nn.Module):
        """RxnFlowPolicy's layers (same names and sizes) emitting the flat (n_actions,) logits. Block embeddings
        are computed once per training step (``refresh``), and each state's rows only fill the head that its
        depth can use (the rest is masked by torchgfn): the cheapest honest way to write it for torchgfn."""

        def __init__(self, hidden=128, block_hidden=128, emb=64):
            super().__init__()
            n_in = STATE_BITS + DESC + MAX_LEN + 1 + N_COND
            self.state = nn.Sequential(nn.Linear(n_in, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                       nn.LayerNorm(hidden))
            self.block = nn.Sequential(nn.Linear(BITS + DESC, block_hidden), nn.SiLU(), nn.Linear(block_hidden, emb))
            mlp = lambda i, h, o: nn.Sequential(nn.Linear(i, h), nn.SiLU(), nn.Linear(h, o))  # noqa: E731
            self.first = mlp(hidden, hidden, emb)
            self.stop = mlp(hidden, hidden, 1)
            self.uni_emb = nn.Parameter(torch.randn(1, hidden) * 0.1)
            self.uni = mlp(hidden, hidden, 1)
            self.bi_emb = nn.Parameter(torch.randn(N_BI, hidden) * 0.1)
            self.bi = mlp(hidden, hidden, emb)
            self.scale = nn.Linear(N_COND, 1)
            self.log_z = mlp(N_COND, 64, 1)
            self.input_dim = n_in
            self._E = None

        def refresh(self):
            self._E = self.block(torch.cat([bits.float(), desc], 1))

        def forward(self, x):
            oh = x[:, STATE_BITS + DESC:STATE_BITS + DESC + MAX_LEN + 1]
            depth = oh.argmax(1)
            cond = x[:, -N_COND:]
            h = self.state(x)
            s = nn.functional.elu(self.scale(cond)) + 1.0
            out = h.new_zeros(len(x), n_actions)
            r0, r1, r2 = [torch.nonzero(depth == d)[:, 0] for d in range(3)]
            if len(r0):
                out[r0, :n_blocks] = (self.first(h[r0]) @ self._E.T) * s[r0]
            if len(r1):
                q = self.bi(nn.functional.silu(h[r1][:, None, :] + self.bi_emb[None]))
                out[r1, n_blocks:-1] = torch.cat([q[:, j] @ self._E[pools[j]].T for j in range(N_BI)], 1) * s[r1]
                out[r1, -1] = self.stop(h[r1])[:, 0] * s[r1, 0]
            if len(r2):
                out[r2, -1] = self.stop(h[r2])[:, 0] * s[r2, 0]
            return out

    env = SynthEnv()
    module = Policy()
    pf = DiscretePolicyEstimator(module, n_actions, preprocessor=Features())
    gfn = TBGFlowNet(pf=pf, pb=None, constant_pb=True, init_logZ=0.0)
    opt = torch.optim.Adam([{"params": list(module.parameters()), "lr": 1e-3},
                            {"params": [gfn.logZ], "lr": 0.05}], foreach=True)

    def step():
        module.refresh()
        trajs = gfn.sample_trajectories(env, n=BATCH, save_logprobs=True)
        loss = gfn.loss(env, trajs, recalculate_all_logprobs=False)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(module.parameters(), 10.0)
        opt.step()
        module._E = None
        return float(loss.detach())

    return module, step


def main(argv):
    impl, n_blocks, rho, steps = argv[0], int(argv[1]), float(argv[2]), int(argv[3])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    t_setup = time.perf_counter()
    bits, desc, pools, u, v, digest = problem(n_blocks)
    runner = run_ours if impl == "ours" else run_torchgfn
    module, step = runner(n_blocks, rho, steps, bits, desc, pools, u, v)
    n_params = sum(p.numel() for n, p in module.named_parameters() if not n.startswith("log_z"))
    setup_s = time.perf_counter() - t_setup
    base = _rss_mb()
    losses = [step() for _ in range(2)]  # warm-up
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    peak = _rss_mb()
    version = None
    if impl == "torchgfn":
        import importlib.metadata as md

        version = md.version("torchgfn")
    print(json.dumps({"impl": impl, "version": version, "n_blocks": n_blocks, "rho": rho, "steps": steps,
                      "s_per_step": float(np.median(times)), "steps_per_s": 1.0 / float(np.median(times)),
                      "peak_rss_mb": peak, "step_extra_rss_mb": peak - base, "setup_s": setup_s,
                      "n_policy_params": n_params, "problem": digest, "first_loss": losses[0],
                      "last_loss": losses[-1], "torch": torch.__version__, "numpy": np.__version__}))


if __name__ == "__main__":
    main(sys.argv[1:])
