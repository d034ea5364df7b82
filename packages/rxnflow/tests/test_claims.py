"""The paper's claims at small scale (seeded; each test can fail)."""

import numpy as np

from iclr25.rxnflow import (
    distribution_fit,
    diverse_top_k,
    draw_subsets,
    log_partition_estimate,
    partition_estimates,
    random_synthesis,
    verify_route,
)
from iclr25.rxnflow.blocks import _grammar


def _action_space(seed=0, scale=2.0):
    """A 1e5-action space: stop + 10 unimolecular actions + 4 block spaces (40k, 30k, 20k, 9,989)."""
    rng = np.random.default_rng(seed)
    fixed = rng.normal(0, scale, size=11)
    spaces = [rng.normal(0, scale, size=n) for n in (40000, 30000, 20000, 9989)]
    exact = np.exp(fixed).sum() + sum(np.exp(s).sum() for s in spaces)
    assert 11 + sum(len(s) for s in spaces) == 100_000
    return fixed, spaces, exact


def test_claim1_partition_estimate_is_unbiased_at_rho_002():
    fixed, spaces, exact = _action_space()
    z = partition_estimates(spaces, fixed, 0.02, 5000, seed=1)
    assert abs(z.mean() / exact - 1) < 0.01
    # without the importance weight the estimate would be 50x too small: the weight is what makes it unbiased
    sub = draw_subsets([len(s) for s in spaces], 0.02, np.random.default_rng(0), min_sampling=1)
    naive = np.exp(fixed).sum() + sum(np.exp(s[i]).sum() for s, i in zip(spaces, sub.index))
    assert naive / exact < 0.05
    # log Z-hat is biased low (Jensen), as the paper notes
    assert np.mean(np.log(z)) < np.log(exact)


def test_claim1_variance_shrinks_as_one_over_rho_and_mc_samples():
    fixed, spaces, exact = _action_space(seed=2, scale=1.0)
    rhos = np.array([0.01, 0.02, 0.04, 0.08])
    var = np.array([partition_estimates(spaces, fixed, r, 2000, seed=3).var() for r in rhos]) / exact ** 2
    # sampling without replacement: Var ∝ (1 - ρ)/ρ, i.e. about 1/ρ for small ρ
    scaled = var * rhos / (1 - rhos)
    assert scaled.max() / scaled.min() < 1.3, scaled
    expected = (0.99 / 0.01) / (0.96 / 0.04)  # ρ ×4 → variance ÷ ~4
    assert 0.75 < (var[0] / var[2]) / expected < 1.33
    var_m4 = partition_estimates(spaces, fixed, 0.02, 2000, n_mc=4, seed=4).var() / exact ** 2
    assert 0.75 < (var[1] / var_m4) / 4 < 1.33  # M independent subsets divide the variance by M


def test_log_partition_estimate_matches_numpy_and_torch():
    import torch

    rng = np.random.default_rng(0)
    fixed, subs, w = rng.normal(size=(3, 2)), [rng.normal(size=(3, 5)), rng.normal(size=(3, 7))], [0.5, 1.2]
    a = log_partition_estimate(fixed, subs, w)
    b = log_partition_estimate(torch.tensor(fixed), [torch.tensor(s) for s in subs], w).numpy()
    manual = np.log(np.exp(fixed).sum(1) + sum(np.exp(wi) * np.exp(s).sum(1) for s, wi in zip(subs, w)))
    np.testing.assert_allclose(a, manual, rtol=1e-12)
    np.testing.assert_allclose(b, manual, rtol=1e-12)


def test_claim2_every_route_replays(trained):
    model, _ = trained
    samples = model.sample(150, seed=1)
    assert all(s.valid for s in samples)
    assert all(verify_route(s.route) for s in samples)
    assert {s.n_blocks for s in samples} == {1, 2}


def test_claim2_routes_replay_with_unimolecular_steps_and_three_blocks():
    from iclr25.rxnflow import RxnFlow, SynthesisSpace, builtin_blocks, builtin_templates

    space = SynthesisSpace(builtin_blocks(300, seed=0), builtin_templates(), max_len=3, allow_dead=True)
    model = RxnFlow(space, "qed*sa", beta=1.0)
    samples = model.sample(120, random_action_prob=0.5, seed=0)
    assert max(s.n_blocks for s in samples) == 3
    used = {json_tpl for s in samples for json_tpl in _templates(s.route)}
    assert len(used) >= 3
    assert all(verify_route(s.route) for s in samples if s.valid)


def _templates(route):
    if "reactants" not in route:
        return []
    return [route["template"]] + [t for c in route["reactants"] for t in _templates(c)]


def test_claim3_blocks_added_after_training_are_sampled(trained):
    model, _ = trained
    have = set(model.space.blocks.smiles)
    new = [s for s in _grammar()["amine"] if s not in have][:20]
    bigger = model.with_blocks(new)
    assert len(bigger.space.blocks) == len(model.space.blocks) + 20
    lp = bigger.first_block_log_probs()
    p_new, p_old = np.exp(lp[-20:]), np.exp(lp[:-20])
    assert np.all(p_new > 0)
    # the trained policy scores unseen blocks from their fingerprints like the amines it knows
    amines = [i for i, s in enumerate(model.space.blocks.smiles) if i >= 30 and i < 80]
    ratio = p_new.mean() / p_old[amines].mean()
    assert 0.2 < ratio < 5, ratio
    samples = bigger.sample(300, seed=2)
    from iclr25.rxnflow.routes import route_blocks

    hits = [s for s in samples if set(route_blocks(s.route)) & set(new)]
    assert hits and all(verify_route(s.route) for s in hits)


def test_trained_distribution_fits_the_enumerated_target(toy, trained):
    from iclr25.rxnflow import RxnFlow

    space, reward, enum = toy
    model, res = trained
    fit = distribution_fit(model, enum)
    untrained = distribution_fit(RxnFlow(space, reward, beta=4.0, seed=0), enum)
    assert fit.pearson > 0.8, fit
    assert untrained.pearson < 0.3
    assert fit.l1 < 0.6 * untrained.l1
    assert res.losses[-20:].mean() < 0.2 * res.losses[:20].mean()


def test_gflownet_modes_beat_random_synthesis(trained):
    model, _ = trained
    ours = model.sample(300, seed=3)
    rand = random_synthesis(model, 300, seed=3)
    top_o = diverse_top_k([s.smiles for s in ours], [s.reward for s in ours], k=30)
    top_r = diverse_top_k([s.smiles for s in rand], [s.reward for s in rand], k=30)
    assert np.mean([s.reward for s in ours]) > np.mean([s.reward for s in rand]) + 0.03
    assert np.mean([ours[i].reward for i in top_o]) >= np.mean([rand[i].reward for i in top_r])


def test_structural_parent_count_equals_enumerated_in_degree():
    from iclr25.rxnflow import enumerate_terminals, parse_reward, toy_space

    space = toy_space(20, 40, n_other=0, templates=["amide_coupling", "sulfonamide"], seed=1)
    enum = enumerate_terminals(space, parse_reward("qed"))
    deg = enum.in_degree()
    ok = enum.trans_terminal >= 0
    for st, pr, pos, tt in zip(enum.trans_state[ok], enum.trans_protocol[ok], enum.trans_pos[ok],
                               enum.trans_terminal[ok]):
        n = space.n_parents(space.blocks.smiles[st], int(pr), int(space.protocols[pr].pool[pos]), 1)
        assert n == deg[enum.terminals[tt][0]]
