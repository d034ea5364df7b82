import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from iclr25.utils.cli import set_torch_threads

    set_torch_threads(1)


@pytest.fixture(scope="session")
def data_index(tmp_path_factory):
    """A tiny generated data set and its index (read-only: tests copy what they change), built once per session."""
    from iclr25.mmed_rag.cli import main

    root = tmp_path_factory.mktemp("data-index")
    data, index = root / "data", root / "index"
    assert main(["generate", "--out", str(data), "--n-train", "8", "--n-db", "8", "--n-test", "4"]) == 0
    assert main(["build-index", str(data), "--out", str(index), "--steps", "2", "--router-steps", "2",
                 "--backend", "numpy"]) == 0
    return data, index
