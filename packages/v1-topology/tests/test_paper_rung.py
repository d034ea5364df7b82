"""The paper rung (issue 59): its cost is stated, it is refused without --force, and its code path runs once on
an 8x8 sheet (``iclr25 claims v1-topology --rung paper --smoke``), so it cannot rot."""

from iclr25.utils import cli as ucli
from iclr25.utils.testing import check_paper_rung
from iclr25.v1_topology import claims


def test_paper_rung_smoke_estimate_and_refusal(capsys, tmp_path):
    methods = [ucli.MethodEntry("v1-topology", "iclr25-v1-topology", "0", "", None)]
    assert ucli._cmd_claims(methods, "v1-topology", "paper", None, None, None, mode="estimate") == 0
    assert "CPU core-hours per seed" in capsys.readouterr().out
    assert ucli._cmd_claims(methods, "v1-topology", "paper", None, tmp_path, None) == 2
    assert "--force" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert claims.RUNGS["paper"]["n_side"] == 64
    check_paper_rung(claims.REGISTRY)
    assert (0, "paper:smoke") in claims._MEASURED and (0, "paper") not in claims._MEASURED
