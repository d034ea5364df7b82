"""``iclr25.utils.device``: --device parsing and resolution (against a stand-in torch/jax: the utils environment
has neither; the packages' suites run it against the real ones)."""

import argparse
import dataclasses
import sys
import types

import pytest

from iclr25.utils import device as dev


class _Device:
    def __init__(self, spec):
        spec = str(spec)
        self.type, _, idx = spec.partition(":")
        self.index = int(idx) if idx else None

    def __str__(self):
        return self.type + ("" if self.index is None else f":{self.index}")

    def __eq__(self, other):
        return str(self) == str(other)


def _fake_torch(monkeypatch, *, cuda=0, mps=False):
    torch = types.ModuleType("torch")
    torch.device = _Device
    torch.cuda = types.SimpleNamespace(is_available=lambda: cuda > 0, device_count=lambda: cuda,
                                       current_device=lambda: 0, get_device_name=lambda i: f"Fake GPU {i}")
    torch.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps))
    torch.float32, torch.float64, torch.bfloat16, torch.float16 = "f32", "f64", "bf16", "f16"
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def test_parse_and_argument():
    p = argparse.ArgumentParser()
    dev.add_device_argument(p, dtype=True)
    a = p.parse_args([])
    assert a.device == "auto" and a.dtype is None
    assert p.parse_args(["--device", "CUDA:2", "--dtype", "bfloat16"]).device == "cuda:2"
    with pytest.raises(SystemExit):
        p.parse_args(["--device", "tpu"])
    for bad in ("gpu", "cuda:", "cuda:x", ""):
        with pytest.raises(ValueError, match="--device must be"):
            dev.parse_device(bad)


def test_torch_device_auto_and_errors_name_the_flag(monkeypatch):
    _fake_torch(monkeypatch)
    assert str(dev.torch_device("auto")) == "cpu" and str(dev.torch_device(None)) == "cpu"
    assert str(dev.torch_device("cpu")) == "cpu"
    with pytest.raises(ValueError, match=r"^--device cuda: no CUDA device"):
        dev.torch_device("cuda")
    with pytest.raises(ValueError, match="--device mps"):
        dev.torch_device("mps")
    _fake_torch(monkeypatch, cuda=2)
    assert str(dev.torch_device("auto")) == "cuda" and str(dev.torch_device("cuda:1")) == "cuda:1"
    with pytest.raises(ValueError, match=r"only 2 CUDA device\(s\)"):
        dev.torch_device("cuda:2")
    assert dev.describe_device(dev.torch_device("cuda:1")) == "cuda:1 (Fake GPU 1)"
    _fake_torch(monkeypatch, mps=True)
    assert str(dev.torch_device("auto")) == "mps"


def test_torch_dtype(monkeypatch):
    _fake_torch(monkeypatch)
    assert dev.torch_dtype(None) == "f32" and dev.torch_dtype(None, needs_float64=True) == "f64"
    assert dev.torch_dtype("bfloat16", "cuda") == "bf16"
    with pytest.raises(ValueError, match="--dtype bfloat16 is for accelerators"):
        dev.torch_dtype("bfloat16", "cpu")
    with pytest.raises(ValueError, match="--dtype must be"):
        dev.torch_dtype("int8")


def test_jax_device(monkeypatch):
    cpu = types.SimpleNamespace(platform="cpu", id=0, device_kind="cpu")
    gpus = [types.SimpleNamespace(platform="gpu", id=i, device_kind="H100") for i in range(2)]
    jax = types.ModuleType("jax")
    jax.devices = lambda kind=None: {None: [cpu], "cpu": [cpu], "gpu": []}[kind]
    monkeypatch.setitem(sys.modules, "jax", jax)
    assert dev.jax_device("auto") is cpu and dev.jax_device("cpu") is cpu
    with pytest.raises(ValueError, match="JAX sees no GPU"):
        dev.jax_device("cuda")
    jax.devices = lambda kind=None: {None: gpus, "cpu": [cpu], "gpu": gpus}[kind]
    assert dev.jax_device("auto") is gpus[0] and dev.jax_device("cuda:1") is gpus[1]
    assert dev.describe_device(gpus[1]) == "gpu:1 (H100)"
    with pytest.raises(ValueError, match="only 2 GPU"):
        dev.jax_device("cuda:5")
    assert dev.jax_device(gpus[1]) is gpus[1] and dev.jax_gpus() == gpus  # a jax.Device is taken as it is

    def no_gpu_backend(kind=None):
        if kind == "gpu":
            raise RuntimeError("Unknown backend: 'gpu' requested, but no platforms that are instances of gpu")
        return [cpu]

    jax.devices = no_gpu_backend  # a CPU-only jaxlib raises instead of returning []
    assert dev.jax_gpus() == []


def test_to_cpu_walks_containers():
    class T:  # a stand-in tensor on an accelerator
        device = "cuda:0"

        def __init__(self, on="cuda:0"):
            self.on = on

        def detach(self):
            return self

        def cpu(self):
            return T("cpu")

    @dataclasses.dataclass
    class R:
        x: object
        n: int = 1

    out = dev.to_cpu({"a": [T(), (T(), 3)], "r": R(T())})
    assert out["a"][0].on == "cpu" and out["a"][1][0].on == "cpu" and out["a"][1][1] == 3
    assert isinstance(out["r"], R) and out["r"].x.on == "cpu" and out["r"].n == 1
    assert dev.to_cpu("text") == "text"


def test_device_conformance_catches_cpu_tensors_and_numpy():
    """Runs where torch is installed (the packages' environments); the utils environment skips it."""
    pytest.importorskip("torch")
    import torch

    from iclr25.utils.device import check_device_conformance

    class Good(torch.nn.Module):
        def __init__(s, device=None):
            super().__init__()
            s.l = torch.nn.Linear(3, 2, device=device)

        def forward(s, x):
            return s.l(x + torch.randn(x.shape, device=x.device))

    class Bad(Good):

        def forward(s, x):
            return s.l(x + torch.randn(x.shape))  # noise made on the CPU

    def step(m, x):
        opt = torch.optim.Adam(m.parameters())
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        return {"loss": loss.item(), "out": m(x).detach().cpu().numpy()}

    r = check_device_conformance(lambda d: (Good(d), torch.ones(4, 3, device=d)), step)
    assert r["loss"] == 0.0 and r["out"].shape == (4, 2)
    with pytest.raises(AssertionError, match="not on the expected device"):
        check_device_conformance(lambda d: (Bad(d), torch.ones(4, 3, device=d)))
    def badnp(m, x): return m(x).detach().numpy()
    with pytest.raises(AssertionError, match="numpy"):
        check_device_conformance(lambda d: (Good(d), torch.ones(4, 3, device=d)), badnp)
    with pytest.raises(AssertionError, match="left parameters"):
        check_device_conformance(lambda d: (Good(), torch.ones(4, 3, device=d)))

    def masked(m, x):  # a boolean-mask index (a loss on some rows only): its size depends on the values
        out = m(x)
        return out[x[:, 0] > 0].pow(2).mean()

    assert check_device_conformance(lambda d: (Good(d), torch.ones(4, 3, device=d)), masked).device.type == "meta"


def test_meta_device_as_given_generator_none_scope_and_argparse_message(monkeypatch, capsys):
    pytest.importorskip("torch")
    import torch

    monkeypatch.delenv(dev.DEVICE_ENV, raising=False)
    meta = torch.device("meta")
    assert dev.torch_device(meta) == meta and dev.torch_generator(meta, 0) is None
    assert torch.randn(2, device=meta, generator=dev.torch_generator(meta, 0)).device == meta
    with dev.device_scope("cpu") as d:
        assert d == "cpu" and str(dev.torch_device(None)) == "cpu"
    assert dev.default_device() == "auto"

    def step(m, x):
        loss = m(x).sum()
        return float(loss), int(loss), bool(loss)

    assert dev.check_device_conformance(lambda d: (torch.nn.Linear(2, 1, device=d), torch.ones(3, 2, device=d)),
                                        step) == (0.0, 0, False)
    p = argparse.ArgumentParser(prog="x")
    dev.add_device_argument(p)
    with pytest.raises(SystemExit):
        p.parse_args(["--device", "gpu"])
    assert "must be auto, cpu, cuda, cuda:N or mps, got 'gpu'" in capsys.readouterr().err
