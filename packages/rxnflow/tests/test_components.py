"""Templates, libraries, rewards and temperature conditioning."""

import importlib.metadata

import numpy as np
import pytest

from iclr25.rxnflow import (
    BlockLibrary,
    RxnFlow,
    TrainConfig,
    builtin_blocks,
    builtin_templates,
    parse_reward,
    toy_space,
    train,
)


def test_builtin_library_and_templates():
    lib = builtin_blocks()
    assert 2000 <= len(lib) <= 2500 and len(set(lib.smiles)) == len(lib)
    assert lib.features.shape == (len(lib), 1199)
    assert lib.features is lib.features  # computed once, cached
    temps = builtin_templates()
    assert sum(t.n_reactants == 2 for t in temps) == 8 and sum(t.n_reactants == 1 for t in temps) == 3
    sub = builtin_blocks(50, kinds=["acid", "amine"], seed=1)
    assert len(sub) == 50
    with pytest.raises(ValueError, match="kinds"):
        builtin_blocks(kinds=["ketone"])


def test_extend_keeps_old_indices_and_cached_features():
    lib = BlockLibrary.from_smiles(["CCN", "OC(=O)c1ccccc1"])
    _ = lib.features
    big = lib.extend(["CCN", "NCc1ccccc1"])
    assert big.smiles[:2] == lib.smiles and len(big) == 3
    np.testing.assert_array_equal(big.features[:2], lib.features)


def test_rewards():
    assert 0 < parse_reward("qed")("CCO") < 1
    sa = parse_reward("sa")("CCO")
    assert 0.7 < sa <= 1.0
    win = parse_reward("logp[0,1]")
    assert win("CCO") < 1 and win("CCCO") == 1.0  # logP -0.0014 vs 0.39
    prod = parse_reward("qed*sa")("c1ccccc1O")
    assert prod == pytest.approx(parse_reward("qed")("c1ccccc1O") * parse_reward("sa")("c1ccccc1O"))


@pytest.mark.skipif(not any(d.metadata["Name"] == "datamol" for d in importlib.metadata.distributions()),
                    reason="datamol is not a dependency; its reactions.json is read only when installed")
def test_datamol_templates_read_without_importing_datamol():
    import sys

    from iclr25.rxnflow import datamol_templates

    temps = datamol_templates()
    assert len(temps) > 80 and "datamol" not in sys.modules


def test_temperature_conditioning_raises_rewards_with_beta():
    space = toy_space(20, 40, n_other=10, seed=2)
    model = RxnFlow(space, "qed", beta=8.0, seed=0)
    train(model, TrainConfig(steps=150, batch_size=64, rho=0.2, min_sampling=5, beta_range=(0.5, 16.0)), seed=0,
          show_progress=False)
    cold = np.mean([s.reward for s in model.sample(300, beta=16.0, seed=1)])
    hot = np.mean([s.reward for s in model.sample(300, beta=0.5, seed=1)])
    assert cold > hot + 0.02, (cold, hot)


def test_pocket_proxy_is_pocket_specific():
    from rdkit import Chem

    from iclr25.rxnflow import POCKETS, parse_reward, proxy_score

    small_polar = "NC(=O)c1ccc(O)cc1NC(N)=O"
    big_lipophilic = "c1ccc(-c2ccc(Cc3ccc(-c4ccccc4)cc3)cc2)cc1"
    s = {p: {m: proxy_score(Chem.MolFromSmiles(m), POCKETS[p]) for m in (small_polar, big_lipophilic)}
         for p in POCKETS}
    # each pocket prefers the molecule that fits it: the ranking of the two flips between the pockets
    assert s["polar"][small_polar] < s["polar"][big_lipophilic]
    assert s["lipophilic"][big_lipophilic] < s["lipophilic"][small_polar]
    r = parse_reward("pocket:polar")
    assert r(small_polar) == pytest.approx(-0.1 * min(0.0, s["polar"][small_polar]))
    with pytest.raises(ValueError, match="pocket"):
        parse_reward("pocket:nowhere")


def test_training_optimizer_is_torch_adam_with_lambdalr_bit_for_bit():
    """train() steps with the shared Adam (iclr25.utils.optim: torch.optim imports torch._dynamo, ~2 s of CPU per
    process), as train() builds it: two parameter
    groups, weight decay, a parameter without a gradient in some steps, gradient clipping and the step-wise
    learning-rate decay give exactly the parameters of torch.optim.Adam(foreach=True) + LambdaLR."""
    import torch

    from iclr25.utils.optim import Adam

    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.SiLU(), torch.nn.Linear(7, 3)), torch.nn.Linear(2, 1)

    (a1, z1), (a2, z2) = make(), make()
    ref = torch.optim.Adam([{"params": list(a1.parameters()), "lr": 1e-3}, {"params": list(z1.parameters()), "lr": 1e-2}],
                           weight_decay=1e-8, eps=1e-8, foreach=True)
    sched = torch.optim.lr_scheduler.LambdaLR(ref, lambda s: 2 ** (-s / 7))
    ours = Adam([{"params": list(a2.parameters()), "lr": 1e-3}, {"params": list(z2.parameters()), "lr": 1e-2}],
                lr=1e-3, weight_decay=1e-8, eps=1e-8)
    g = torch.Generator().manual_seed(1)
    for step in range(25):
        x, c = torch.randn(4, 5, generator=g), torch.randn(4, 2, generator=g)
        for a, z, opt in ((a1, z1, ref), (a2, z2, ours)):
            opt.zero_grad()
            loss = (a(x) ** 2).mean() + (0 if step % 3 == 0 else (z(c) ** 2).mean())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(list(a.parameters()) + list(z.parameters()), 0.5)
            if opt is ref:
                ref.step()
                sched.step()
            else:
                ours.step(lr_scale=2 ** (-step / 7))
    pairs = list(zip([*a1.parameters(), *z1.parameters()], [*a2.parameters(), *z2.parameters()], strict=True))
    assert all(torch.equal(p, q) for p, q in pairs)
    assert not torch.equal(next(a1.parameters()), make()[0][0].weight)  # it moved


def test_partition_estimates_are_sums_over_draw_subsets_draws():
    """partition_estimates unrolls draw_subsets for speed: the same random stream, subsets and weights."""
    from iclr25.rxnflow.estimator import draw_subsets, partition_estimates

    rng0 = np.random.default_rng(3)
    fixed, spaces = rng0.normal(size=4), [rng0.normal(size=n) for n in (900, 40, 7)]
    for rho, n_mc, min_sampling in ((0.05, 1, 1), (0.2, 2, 10), (1.0, 1, 1)):
        rng = np.random.default_rng(11)
        want = []
        for _ in range(30):
            acc = 0.0
            for _ in range(n_mc):
                sub = draw_subsets([len(s) for s in spaces], rho, rng, min_sampling=min_sampling)
                acc += sum(np.exp(w) * np.exp(s)[i].sum() for s, i, w in zip(spaces, sub.index, sub.log_weight))
            want.append(np.exp(fixed).sum() + acc / n_mc)
        got = partition_estimates(spaces, fixed, rho, 30, n_mc=n_mc, min_sampling=min_sampling, seed=11)
        np.testing.assert_array_equal(got, want)
