import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from iclr25.utils.cli import set_torch_threads

    set_torch_threads(1)
