"""The speed-ups must compute what the plain code computes: incremental LM decoding, size-bucketed sampling
batches, a schedule stopped at a ladder rung, the batched stereo redraw, and the package's AdamW."""

import numpy as np
import torch

from iclr25.next_mol import (
    CausalLM,
    EnsembleSettings,
    LMConfig,
    graphs_of,
    make_dmt,
    prepare,
    redraw_flipped,
    reference_ensemble,
    stereo_matches,
    train_dmt,
)
from iclr25.next_mol.diffusion import _size_batches


def test_incremental_decoding_matches_the_full_forward():
    torch.manual_seed(0)
    lm = CausalLM(LMConfig(20, d_model=32, n_layers=2, n_heads=4, max_len=16)).eval()
    ids = torch.randint(3, 20, (3, 12))
    with torch.no_grad():
        full = lm(ids)
    cache: list = []
    steps = torch.stack([lm.step_logits(ids[:, t], cache) for t in range(ids.shape[1])], 1)
    assert torch.allclose(full, steps, atol=1e-5)


def test_size_batches_cover_every_job_once_with_little_padding():
    graphs = graphs_of([prepare(s) for s in ("CCO", "CCCCCCO", "c1ccccc1CCN", "CC(C)Cc1ccc(C(C)C(=O)O)cc1")])
    jobs = sorted([(i, j) for i in range(4) for j in range(5)], key=lambda ij: graphs[ij[0]].n_atoms)
    batches = _size_batches(jobs, graphs, 6)
    assert sorted(j for b in batches for j in b) == sorted(jobs)
    for b in batches:
        n = [graphs[i].n_atoms ** 2 for i, _ in b]
        assert len(b) <= 6 and len(b) * max(n) <= 1.2 * sum(n) + 1e-9


def test_stop_after_is_the_ladder_rung_of_the_longer_schedule():
    ens = reference_ensemble("CC(C)Cc1ccc(C(C)C(=O)O)cc1", EnsembleSettings(n_embed=4, max_confs=2), seed=0)
    graphs = graphs_of([ens])
    snap = {}
    a = make_dmt(hidden=32, pair_hidden=16, n_blocks=1, n_heads=4, seed=0)
    train_dmt(a, graphs, steps=8, batch_size=4, warmup=2, seed=0,
              callback=lambda s: snap.update({k: v.clone() for k, v in a.state_dict().items()}), callback_steps=[4])
    b = make_dmt(hidden=32, pair_hidden=16, n_blocks=1, n_heads=4, seed=0)
    res = train_dmt(b, graphs, steps=8, batch_size=4, warmup=2, seed=0, stop_after=4)
    assert res.steps == 4 and len(res.losses) == 4
    for k, v in b.state_dict().items():
        assert torch.allclose(v, snap[k]), k


def test_redraw_flipped_only_keeps_conformers_with_the_right_stereo():
    ens = reference_ensemble("C[C@@H](N)C(=O)NC1CC1", EnsembleSettings(n_embed=4, max_confs=2), seed=0)
    coords = np.concatenate([ens.coords, ens.coords * np.array([1.0, 1.0, -1.0])])  # 2 right, 2 mirrored
    before = coords.copy()
    dmt = make_dmt(hidden=32, pair_hidden=16, n_blocks=1, n_heads=4, seed=0)
    new, ok, redrawn = redraw_flipped(dmt, [ens.molecule], [coords], rounds=4, steps=5, seed=0)
    assert np.array_equal(coords, before)                      # the input is not modified
    assert np.array_equal(new[0][:2], coords[:2])              # right ones are kept as they are
    assert np.array_equal(stereo_matches(ens.molecule, new[0]), ok[0])
    assert ok[0].sum() == 2 + redrawn[0] and ok[0][:2].all()


def test_length_buckets_give_the_same_training_step():
    from iclr25.next_mol import SelfiesTokenizer, load_moses, to_selfies_corpus, train_lm

    corpus = to_selfies_corpus(load_moses("train", 64, seed=0))
    tok = SelfiesTokenizer().fit(corpus)
    states = []
    for buckets in (1, 4):
        torch.manual_seed(0)
        lm = CausalLM(LMConfig(tok.size, d_model=32, n_layers=1, n_heads=4, max_len=80))
        res = train_lm(lm, tok, corpus, steps=3, batch_size=16, seed=0, length_buckets=buckets)
        states.append((lm.state_dict(), res.losses))
    assert np.allclose(states[0][1], states[1][1], atol=1e-5)
    for k, v in states[0][0].items():
        w = states[1][0][k]
        if k.endswith("self_attn.in_proj_bias"):
            # the key bias has an exactly zero gradient (softmax ignores a shift shared by all keys), so Adam turns
            # its rounding noise into full-size steps of either sign; compare the query and value biases only
            v, w = torch.cat([v[:32], v[64:]]), torch.cat([w[:32], w[64:]])
        assert torch.allclose(v, w, atol=1e-5), k


def test_adamw_is_torch_adamw_with_lambda_lr_step_for_step():
    """iclr25.next_mol.optim.AdamW (no torch._dynamo import) against torch.optim.AdamW + LambdaLR: same weights,
    bit for bit, after warm-up, cosine decay, weight decay and gradient clipping."""
    import copy

    from iclr25.next_mol.lm import _lr_lambda
    from iclr25.next_mol.optim import AdamW

    torch.manual_seed(0)
    m1 = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    m2 = copy.deepcopy(m1)
    lam = _lr_lambda(5, 30, 0.1)
    o1 = torch.optim.AdamW(m1.parameters(), lr=3e-3, weight_decay=0.05, betas=(0.9, 0.98))
    s1 = torch.optim.lr_scheduler.LambdaLR(o1, lam)
    o2 = AdamW(m2.parameters(), lr=3e-3, weight_decay=0.05, betas=(0.9, 0.98), lr_lambda=lam)
    g = torch.Generator().manual_seed(1)
    for _ in range(30):
        x = torch.randn(32, 8, generator=g)
        for m, o in ((m1, o1), (m2, o2)):
            o.zero_grad()
            (m(x) ** 2).mean().backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            o.step()
        s1.step()
    for a, b in zip(m1.parameters(), m2.parameters(), strict=True):
        assert torch.equal(a, b)
