"""The model and the training plumbing: RoPE is relative, a packed document is computed as if alone, greedy
generation agrees with the forward pass, packing keeps documents whole, capacity accounting."""

import math

import numpy as np
import pytest
import torch

from iclr25.knowledge_manipulation import (
    GPTConfig,
    RotaryGPT,
    bits_per_person,
    capacity_report,
    suggest_model,
)
from iclr25.knowledge_manipulation.model import apply_rope, rope_tables
from iclr25.knowledge_manipulation.training import Docs, generate, pack


def test_rope_scores_depend_on_offset_only():
    torch.manual_seed(0)
    cos, sin = rope_tables(64, 8)
    q, k = torch.randn(8), torch.randn(8)

    def score(p, s):
        rq = apply_rope(q.view(1, 1, 1, 8), cos[p].view(1, 1, 1, 4), sin[p].view(1, 1, 1, 4))
        rk = apply_rope(k.view(1, 1, 1, 8), cos[s].view(1, 1, 1, 4), sin[s].view(1, 1, 1, 4))
        return float((rq * rk).sum())

    assert score(10, 3) == pytest.approx(score(40, 33), abs=1e-5)
    assert score(10, 3) != pytest.approx(score(10, 4), abs=1e-3)
    assert score(5, 5) == pytest.approx(float(q @ k), abs=1e-5)  # no rotation at equal positions


def test_packed_document_equals_standalone():
    torch.manual_seed(0)
    net = RotaryGPT(GPTConfig(vocab_size=20, n_layers=2, d_model=16, n_heads=2, max_len=32), seed=1)
    a, b = [5, 6, 7, 2], [8, 9, 10, 11, 12, 2]
    alone = net(torch.tensor([b]))
    batch = pack(Docs([a, b], [[0, 1, 1, 1], [0] + [1] * 5]), 16, rng=np.random.default_rng(0))
    logits = net(batch.ids, batch.pos, batch.doc)
    where = (batch.doc[0] == 1).nonzero().flatten()
    assert torch.allclose(logits[0, where], alone[0], atol=1e-5)
    assert batch.pos[0, where].tolist() == list(range(len(b)))


def test_pack_keeps_documents_whole():
    rng = np.random.default_rng(0)
    docs = Docs([[3] * n + [2] for n in rng.integers(1, 10, 50)], [[0] + [1] * n for n in rng.integers(1, 10, 50)])
    docs = Docs(docs.ids, [[0] + [1] * (len(x) - 1) for x in docs.ids])
    b = pack(docs, 16, rng=rng)
    assert b.n_tokens == docs.n_tokens
    for r in range(b.n_rows):
        d = b.doc[r]
        for k in d.unique().tolist():
            if k >= 0:
                assert int((d == k).sum()) == len(docs.ids[k])
    with pytest.raises(ValueError, match="exceeds seq_len"):
        pack(Docs([[1] * 20], [[1] * 20]), 16, rng=rng)


def test_greedy_generation_matches_forward():
    torch.manual_seed(0)
    net = RotaryGPT(GPTConfig(vocab_size=30, n_layers=1, d_model=16, n_heads=2, max_len=32), seed=2)
    prompts = [[4, 5, 6], [7, 8, 9, 10, 11]]
    out = generate(net, prompts, 4, batch_size=2)  # left padding must not change anything
    for p, g in zip(prompts, out, strict=True):
        seq = list(p)
        for tok in g:
            assert int(net(torch.tensor([seq]))[0, -1].argmax()) == tok
            seq.append(tok)


def test_capacity_accounting():
    bpp = bits_per_person()
    assert bpp == pytest.approx(math.log2(12 * 28 * 100) + math.log2(100 * 150 * 60 * 120))
    cfg = GPTConfig(vocab_size=1000, n_layers=4, d_model=128, n_heads=4)
    assert sum(p.numel() for p in RotaryGPT(cfg).parameters()) == cfg.n_params
    rep = capacity_report(1000, cfg, exposures=100)
    assert rep.rate_bits_per_param == 1.0 and rep.headroom == pytest.approx(cfg.n_params / (1000 * bpp))
    assert capacity_report(1000, cfg, exposures=1000).headroom == pytest.approx(2 * rep.headroom)
    small, big = suggest_model(200, exposures=40), suggest_model(20000, exposures=40)
    assert small.n_params < big.n_params


def test_attention_is_the_softmax_formula():
    """The written-out attention equals torch's scaled_dot_product_attention on the same mask."""
    torch.manual_seed(0)
    net = RotaryGPT(GPTConfig(vocab_size=20, n_layers=1, d_model=16, n_heads=2, max_len=32), seed=2)
    blk, x = net.blocks[0], torch.randn(2, 7, 16)
    mask = torch.ones(7, 7, dtype=torch.bool).tril()[None, None].expand(2, 1, 7, 7)
    cos, sin = net.cos[:7][None, None], net.sin[:7][None, None]
    h = blk.qkv(blk.ln1(x)).view(2, 7, 3, 2, 8).permute(2, 0, 3, 1, 4)
    q, k, v = apply_rope(h[0], cos, sin), apply_rope(h[1], cos, sin), h[2]
    a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ref = x + blk.proj(a.transpose(1, 2).reshape(2, 7, 16))
    ref = ref + blk.out(torch.nn.functional.gelu(blk.fc(blk.ln2(ref))))
    torch.testing.assert_close(blk(x, cos, sin, mask), ref, atol=1e-5, rtol=1e-5)


def test_adamw_follows_its_formula():
    """Three steps of our AdamW against the update written out in numpy (decoupled weight decay, bias
    correction), with the learning rate changed between steps."""
    from iclr25.knowledge_manipulation.training import AdamW

    rng = np.random.default_rng(0)
    w0, grads = rng.normal(size=(3, 2)), [rng.normal(size=(3, 2)) for _ in range(3)]
    p = torch.tensor(w0, dtype=torch.float64, requires_grad=True)
    opt = AdamW([{"params": [p], "weight_decay": 0.1}], lr=0.01, betas=(0.9, 0.98), eps=1e-8)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for t, (g, lr) in enumerate(zip(grads, (0.01, 0.02, 0.005)), 1):
        p.grad = torch.tensor(g)
        opt.set_lr(lr)
        opt.step()
        w = w * (1 - lr * 0.1)
        m, v = 0.9 * m + 0.1 * g, 0.98 * v + 0.02 * g * g
        w = w - lr / (1 - 0.9 ** t) * m / (np.sqrt(v) / np.sqrt(1 - 0.98 ** t) + 1e-8)
    np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-12, atol=1e-12)
    opt.zero_grad()
    assert p.grad is None


def test_cot_prompt_scoring_picks_the_likeliest_label():
    """CoT at inference only: the prompt is the question and the chain of thought up to the label, and the
    label is the task's label with the highest likelihood (a model that always prefers 'odd' scores the share
    of 'odd' labels; one that prefers 'even' the rest)."""
    from iclr25.knowledge_manipulation import build_task, make_population
    from iclr25.knowledge_manipulation.experiments import build_tokenizer
    from iclr25.knowledge_manipulation.tasks import cot_prefix, task_labels
    from iclr25.knowledge_manipulation.training import evaluate_cot_prompt

    pop = make_population(40, seed=0)
    tok = build_tokenizer(pop)
    qas = build_task(pop, "classification:birth_month:mod2:cot", people="test")
    assert cot_prefix(qas[0]).endswith(", so") and qas[0].answer.startswith(cot_prefix(qas[0]))
    assert task_labels("classification:birth_month:mod2") == ("even", "odd")
    share_odd = float(np.mean([q.label == "odd" for q in qas]))
    net = RotaryGPT(GPTConfig(vocab_size=tok.vocab_size, n_layers=1, d_model=16, n_heads=2, max_len=64), seed=0)
    for word, expected in (("odd", share_odd), ("even", 1 - share_odd)):
        bias = torch.zeros(tok.vocab_size)
        bias[tok.encode(word)[0]] = 50.0
        net.forward = lambda ids, pos=None, doc=None, b=bias: torch.zeros(*ids.shape, tok.vocab_size) + b
        res = evaluate_cot_prompt(net, tok, qas)
        assert res.accuracy == pytest.approx(expected) and res.n == len(qas)
        assert all(ex[2] == word and ex[0].endswith(", so") for ex in res.examples)
    with pytest.raises(ValueError, match="CoT form"):
        evaluate_cot_prompt(net, tok, build_task(pop, "classification:birth_month:mod2", people="test"))
