"""The paper rung (issue 59): its cost is stated, it is refused without --force, and its code path runs once,
shrunk (``iclr25 claims augood --rung paper --smoke``), so it cannot rot."""

from iclr25.augood import claims
from iclr25.utils import cli as ucli
from iclr25.utils.testing import check_paper_rung


def test_paper_rung_smoke_estimate_and_refusal(capsys, tmp_path):
    methods = [ucli.MethodEntry("augood", "iclr25-augood", "0", "", None)]
    assert ucli._cmd_claims(methods, "augood", "paper", None, None, None, mode="estimate") == 0
    assert "CPU core-hours per seed" in capsys.readouterr().out
    assert ucli._cmd_claims(methods, "augood", "paper", None, tmp_path, None) == 2
    assert "--force" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert claims._cfg("paper") == {"model": "rf", "grid": (0.3, 0.95, 0.05), "n_bootstrap": 1000, "n_trees": 200}
    check_paper_rung(claims.REGISTRY)
