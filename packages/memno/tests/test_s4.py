"""S4D: FFT convolution = recurrence; streaming = full sequence; causality of every model."""

import pytest
import torch

from iclr25.memno import S4D, make_model


@pytest.mark.parametrize("method", ["fft", "toeplitz"])
@pytest.mark.parametrize("shape", [(3, 25, 8), (2, 25, 5, 8)])
def test_convolution_equals_recurrence(method, shape):
    torch.manual_seed(0)
    layer = S4D(8, 64)
    u = torch.randn(shape)
    conv, rec = layer.ssm(u, method=method), layer.ssm_recurrent(u)
    assert conv.abs().max() > 0.1
    assert torch.allclose(conv, rec, atol=1e-5, rtol=0)


def test_kernel_is_2re_cbbar_abar_powers():
    torch.manual_seed(1)
    layer = S4D(4, 8)
    a_bar, b_bar, c = layer.discretize()
    k = layer.kernel(5)
    direct = torch.stack([2 * (c * b_bar * a_bar**j).sum(-1).real for j in range(5)], dim=-1)
    assert torch.allclose(k, direct, atol=1e-6)


@pytest.mark.parametrize("name", ["memno", "memno-gru", "ffno", "ffno-history", "fno"])
def test_streaming_equals_full_sequence(name):
    model = make_model(name, width=12, n_layers=2, modes=6, seed=3)
    u = torch.randn(2, 15, 16)
    with torch.no_grad():
        full = model(u)
        state = model.init_state(u[:, 0])
        steps = []
        for t in range(u.shape[1]):
            pred, state = model.step(u[:, t], state)
            steps.append(pred)
    assert torch.allclose(torch.stack(steps, 1), full, atol=1e-5)


@pytest.mark.parametrize("name", ["memno", "memno-gru", "ffno-history"])
def test_causality(name):
    model = make_model(name, width=12, n_layers=2, modes=6, seed=4)
    u = torch.randn(2, 12, 16)
    v = u.clone()
    v[:, 7] += 1.0
    with torch.no_grad():
        a, b = model(u), model(v)
    # outputs up to t = 6 do not see the perturbation at t = 7 (FFT round-off aside) ...
    assert (a[:, :7] - b[:, :7]).abs().max() < 1e-5
    # ... and the memory carries it forward to later outputs
    assert (a[:, 8:] - b[:, 8:]).abs().max() > 1e-3
