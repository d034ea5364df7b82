import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    torch.set_num_threads(1)  # a shared 2-core machine; tiny models run fastest on one thread


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ICLR25_NEXT_MOL_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
