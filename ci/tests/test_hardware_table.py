"""``ci/hardware_table.py`` (``make hardware-table``): INSTALL.md's what-runs-where table from the registries."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load():
    spec = importlib.util.spec_from_file_location("hardware_table", ROOT / "ci" / "hardware_table.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hardware_table"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_rows_say_backend_device_and_paper_cost(monkeypatch, tmp_path, capsys):
    ht = _load()
    costs = {"memno": {"gpu_hours": 0.05, "cpu_hours": 0.0, "memory_gb": 2, "hardware": "one GPU", "what": "w",
                       "data": "", "measured": False, "seeds": 3},
             "weighted-lowrank": {"gpu_hours": 0, "cpu_hours": 0.25, "memory_gb": 4, "hardware": "one core",
                                  "what": "w", "data": "planted", "measured": True, "seeds": 3}}
    monkeypatch.setattr(ht, "paper_cost", lambda slug: costs.get(slug))
    assert ht.row("memno") == "| `memno` | torch | yes | 0.05 GPU-h per seed x 3 (estimated), 2 GB | one GPU | – |"
    assert ht.row("weighted-lowrank").startswith("| `weighted-lowrank` | numpy/scipy (CPU) | – | 0.25 CPU core-h "
                                                 "per seed x 3 (measured), 4 GB")
    assert ht.row("pgw").endswith("| not yet | | |")
    install = tmp_path / "INSTALL.md"
    install.write_text(f"# x\n\n{ht.BEGIN}\nold\n{ht.END}\nrest\n")
    monkeypatch.setattr(ht, "ROOT", tmp_path)
    monkeypatch.setattr(ht, "table", lambda: "| new |")
    assert ht.main(["--check"]) == 1
    assert ht.main([]) == 0 and install.read_text() == f"# x\n\n{ht.BEGIN}\n| new |\n{ht.END}\nrest\n"
    assert ht.main(["--check"]) == 0
    install.write_text("# no block\n")
    assert ht.main([]) == 2 and "no" in capsys.readouterr().err
