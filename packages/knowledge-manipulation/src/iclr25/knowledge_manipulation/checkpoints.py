"""Small Stage A checkpoints shipped inside the package, so that the claims' test rung and the demo can run five
seeds of Stage B (the fine-tunes the paper's claims are about) within the test budget on two CPU cores.

Each checkpoint is the Stage A model of :func:`.experiments.test_config` pretrained at one seed: its weights in
``stage_a/seed<S>.npz`` (float32 arrays, read with ``allow_pickle=False``: no pickle anywhere), and
``stage_a/stage_a.json`` beside them with the experiment config, the seeds, the command that made them
(``python -m iclr25.knowledge_manipulation.checkpoints``), the torch version and the retrieval accuracy each
reached, and ``stage_a/manifest.json`` (:mod:`iclr25.utils.checkpoints`: every file's SHA-256, written last), which
:func:`load_stage_a` verifies: weights from another build than the record are refused in one line. The population and the tokenizer are not stored: both are rebuilt from the seed exactly as
:func:`.experiments.pretrain` builds them, and :func:`load_stage_a` refuses a checkpoint whose Stage A config
(:data:`STAGE_A_FIELDS`) or vocabulary no longer matches the code (rebuild with the command above). The
manifest's ``config`` is the whole experiment config at build time; its Stage B part (fine-tune recipe, replay,
tasks) was not used to make the checkpoints and may differ from today's :func:`.experiments.test_config`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

__all__ = ["STAGE_A_DIR", "STAGE_A_FIELDS", "shipped_seeds", "stage_a_fields", "load_stage_a", "build_stage_a"]

STAGE_A_DIR = Path(__file__).parent / "stage_a"
RECORD = "stage_a.json"
BUILD_COMMAND = "python -m iclr25.knowledge_manipulation.checkpoints"


def _manifest() -> dict:
    path = STAGE_A_DIR / RECORD
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


#: the fields of an :class:`.experiments.ExperimentConfig` that Stage A depends on (the fine-tune recipe, the
#: replay fraction and the task list are Stage B's: changing them keeps the shipped checkpoints valid)
STAGE_A_FIELDS = ("n_people", "mode", "order", "fullname", "permute", "bio_attributes", "qa_attributes", "n_layers",
                  "d_model", "n_heads", "pretrain")


def stage_a_fields(config: dict) -> dict:
    """The Stage A part of an experiment config (a ``to_dict()``), JSON-normalised for comparison."""
    return json.loads(json.dumps({k: config.get(k) for k in STAGE_A_FIELDS}))


def shipped_seeds() -> tuple[int, ...]:
    """Seeds with a shipped Stage A checkpoint of :func:`.experiments.test_config`."""
    return tuple(int(s) for s in _manifest().get("seeds", []))


def load_stage_a(seed: int, *, device=None):
    """The shipped Stage A model of :func:`.experiments.test_config` at ``seed`` (a
    :class:`.experiments.PretrainedModel`), on ``device`` (``None``: the CPU)."""
    import torch

    from iclr25.utils.checkpoints import verify_manifest

    from .biography import make_population
    from .experiments import PretrainedModel, build_tokenizer, test_config
    from .model import GPTConfig, RotaryGPT

    man = _manifest()
    if int(seed) not in shipped_seeds():
        raise ValueError(f"no shipped Stage A checkpoint for seed {seed}; shipped seeds: {list(shipped_seeds())}")
    verify_manifest(STAGE_A_DIR, [RECORD, f"seed{int(seed)}.npz"], what="shipped Stage A checkpoint folder")
    cfg = test_config()
    if stage_a_fields(man.get("config", {})) != stage_a_fields(cfg.to_dict()):
        raise ValueError(f"the shipped Stage A checkpoints in {STAGE_A_DIR} were made for another Stage A config "
                         f"than test_config(); rebuild them: {BUILD_COMMAND}")
    pop = make_population(cfg.n_people, seed=seed)
    tok = build_tokenizer(pop, seed=seed)
    gcfg = GPTConfig(vocab_size=tok.vocab_size, n_layers=cfg.n_layers, d_model=cfg.d_model, n_heads=cfg.n_heads,
                     max_len=max(cfg.pretrain.seq_len, cfg.finetune.seq_len))
    with np.load(STAGE_A_DIR / f"seed{int(seed)}.npz", allow_pickle=False) as z:
        state = {k: torch.from_numpy(np.array(z[k])) for k in z.files}
    model = RotaryGPT(gcfg, seed=seed)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"the shipped Stage A checkpoint of seed {seed} does not fit the model this code builds "
                         f"({str(exc).splitlines()[0][:120]}); rebuild them: {BUILD_COMMAND}") from None
    model.eval()
    if device is not None:
        from iclr25.utils.device import torch_device

        model.to(torch_device(device))
    return PretrainedModel(model, tok, pop, cfg, None, int(seed))


def build_stage_a(seeds=(0, 1, 2, 3, 4), folder: Path = STAGE_A_DIR) -> dict:
    """Pretrain :func:`.experiments.test_config`'s Stage A at each seed and write the checkpoints, their record
    and (last) the folder's hash manifest."""
    import platform

    import torch

    from iclr25.utils.checkpoints import start_save, write_manifest
    from iclr25.utils.cli import set_torch_threads
    from iclr25.utils.io import atomic_path, atomic_write

    from .experiments import pretrain, retrieval_accuracy, test_config

    set_torch_threads(1)
    cfg = test_config()
    folder.mkdir(parents=True, exist_ok=True)
    start_save(folder)
    made = {}
    for s in seeds:
        pre = pretrain(cfg, seed=s)
        with atomic_path(folder / f"seed{s}.npz") as tmp, open(tmp, "wb") as f:
            np.savez_compressed(f, **{k: v.detach().cpu().numpy().astype(np.float32)
                                      for k, v in pre.model.state_dict().items()})
        made[str(s)] = {"retrieval_birth_date_train": retrieval_accuracy(pre.model, pre, "birth_date", "train").accuracy,
                        "retrieval_birth_date_test": retrieval_accuracy(pre.model, pre, "birth_date", "test").accuracy,
                        "pretrain_final_loss": pre.stats.final_loss}
        print(f"seed {s}: {made[str(s)]}", flush=True)
    man = {"config": json.loads(json.dumps(cfg.to_dict())), "seeds": list(seeds), "command": BUILD_COMMAND,
           "torch": torch.__version__, "python": platform.python_version(), "per_seed": made}
    with atomic_write(folder / RECORD) as f:
        f.write(json.dumps(man, indent=1, allow_nan=False) + "\n")
    write_manifest(folder, [RECORD, *(f"seed{s}.npz" for s in seeds)], meta={"format": "knowledge-manipulation stage A"})
    return man


if __name__ == "__main__":  # pragma: no cover
    build_stage_a(tuple(int(x) for x in sys.argv[1:]) or (0, 1, 2, 3, 4))
