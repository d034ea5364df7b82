"""The paper rung (issue 59): its cost is stated, it is refused without --force, and its code path runs once,
shrunk (``iclr25 claims weighted-lowrank --rung paper --smoke``), so it cannot rot."""

from iclr25.utils import cli as ucli
from iclr25.utils.testing import check_paper_rung
from iclr25.weighted_lowrank import claims


def test_paper_rung_smoke_estimate_and_refusal(capsys, tmp_path):
    methods = [ucli.MethodEntry("weighted-lowrank", "iclr25-weighted-lowrank", "0", "", None)]
    assert ucli._cmd_claims(methods, "weighted-lowrank", "paper", None, None, None, mode="estimate") == 0
    assert "CPU core-hours per seed" in capsys.readouterr().out
    assert ucli._cmd_claims(methods, "weighted-lowrank", "paper", None, tmp_path, None) == 2
    assert "--force" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert claims._match_size("paper") == (4000, 16)
    assert claims._cost_size("paper")[:3] == (4000, 4000, (16, 32, 64, 128))
    check_paper_rung(claims.REGISTRY, claim_ids=["sketch-matches-exact", "per-iteration-cost-linear-in-k"])
