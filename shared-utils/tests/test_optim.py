"""iclr25.utils.optim.Adam: torch.optim's Adam and AdamW, bit for bit, without importing torch._dynamo."""

import pytest

torch = pytest.importorskip("torch")

from iclr25.utils.optim import Adam  # noqa: E402
from iclr25.utils.testing import check_adam_matches_torch  # noqa: E402


def test_matches_torch_adam_and_adamw():
    check_adam_matches_torch()


def test_one_error_line_for_no_parameters_and_bad_lr():
    with pytest.raises(ValueError, match="no parameters"):
        Adam([], lr=1e-3)
    with pytest.raises(ValueError, match="lr must be > 0"):
        Adam([torch.nn.Parameter(torch.ones(1))], lr=0.0)


def test_set_lr_and_lr_scale_change_the_step():
    w1, w2 = (torch.nn.Parameter(torch.ones(1)) for _ in range(2))
    o1, o2 = Adam([w1], lr=0.1), Adam([w2], lr=0.2)
    o1.set_lr(0.2)
    for w, o in ((w1, o1), (w2, o2)):
        (w ** 2).sum().backward()
        o.step()
    assert torch.equal(w1, w2)
    w3 = torch.nn.Parameter(torch.ones(1))
    o3 = Adam([w3], lr=0.1)
    (w3 ** 2).sum().backward()
    o3.step(lr_scale=2.0)
    assert torch.equal(w3, w2)


def test_the_docstring_example():
    w = torch.nn.Parameter(torch.ones(2))
    opt = Adam([w], lr=0.1)
    (w ** 2).sum().backward()
    opt.step()
    assert [round(x, 4) for x in w.tolist()] == [0.9, 0.9]
