"""The experiments' data and scoring, shared by ``repro``, the claims tests and the benchmarks: the generated
train/test split with its questions, greedy evaluation, and the trivial references every model is scored beside
(the trivial localisation answerers, the answer prior). The reproduction itself is :mod:`iclr25.teochat.repro`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .assistant import Assistant
from .conversation import Example, make_examples
from .metrics import TaskScores, evaluate_predictions, pixel_f1
from .synth import SCENES, EOSequence, generate_sequences

__all__ = ["REPRO_SCENES", "REPRO_TASKS", "ExperimentData", "make_data", "evaluate", "TRIVIAL_LOCALISATION",
           "trivial_localisation", "single_frame_oracle", "answer_prior", "question_prior", "question_prior_answers",
           "question_template"]

#: The trivial answerers of change localisation ("identify the buildings that changed"), scored beside every
#: model: every building visible in the last frame (no look at the earlier frames), every building visible in
#: the first frame, every footprint of the sequence ("all objects": buildings, cleared lots, foundations, rubble),
#: and "none" (no change, which is also the answer prior: the most common training answer). A *visible
#: building* is a footprint with a roof (intact, minor or major damage); a cleared lot, a foundation or a rubble
#: patch is not one (the ``det1`` questions use the same definition). Answers hold at most
#: :data:`~iclr25.teochat.conversation.MAX_BOXES` boxes, as the models' do.
TRIVIAL_LOCALISATION = ("every visible building in the last frame", "every visible building in the first frame",
                        "every building", "no change")

#: scene mix of the reproduction: the change scenes (xBD / S2Looking / QFabric analogs) drawn twice as often
REPRO_SCENES = SCENES + ("residential", "construction_site", "demolition_site", "residential", "flooded_road")
#: the temporal tasks plus single-image detection (a TEOChat-T-like mix: the claims are about temporal tasks)
REPRO_TASKS = ("tsc", "loc", "damage", "sre", "qa", "rqa", "tre", "rtqa", "det1")

@dataclasses.dataclass(frozen=True)
class ExperimentData:
    """Train and test sequences with their conversations."""

    train_seqs: list[EOSequence]
    test_seqs: list[EOSequence]
    train: list[Example]
    test: list[Example]


def make_data(n_train: int, n_test: int, *, seed: int = 0, size: int = 32,
              scenes: tuple[str, ...] = REPRO_SCENES, tasks: Sequence[str] | None = None,
              balanced_looks: bool = True) -> ExperimentData:
    """Disjoint train/test sequences (different seeds) and the questions of ``tasks`` (default: all) on them.

    ``balanced_looks`` (the default since 0.8, issue 60; :func:`~iclr25.teochat.synth.generate_sequences`): no
    first- or last-frame look marks a change; ``False`` draws the 0.5-0.7 generator's sequences (the shipped
    localisation checkpoints, the ``scene`` and ``budget`` rungs)."""
    tr = generate_sequences(n_train, seed=seed, size=size, scenes=scenes, balanced_looks=balanced_looks)
    te = generate_sequences(n_test, seed=seed + 10_000, size=size, scenes=scenes, balanced_looks=balanced_looks)
    return ExperimentData(tr, te, make_examples(tr, seed=seed, tasks=tasks),
                          make_examples(te, seed=seed + 1, tasks=tasks))


def evaluate(asst: Assistant, data: ExperimentData, *, shuffle_frames: bool = False,
             examples: Sequence[Example] | None = None) -> tuple[TaskScores, list[str]]:
    """Greedy answers on the test questions and their per-task scores."""
    ex = list(data.test if examples is None else examples)
    preds = asst.predict(ex, data.test_seqs, shuffle_frames=shuffle_frames)
    return evaluate_predictions(ex, preds), preds


def trivial_localisation(examples: Sequence[Example], sequences: Sequence[EOSequence]) -> dict[str, float]:
    """Pixel F1 of each :data:`TRIVIAL_LOCALISATION` answerer on the change-localisation (``loc``) questions of
    ``examples``. If one of them reaches a model's F1, the model's number is no evidence of temporal reasoning."""
    from .conversation import format_boxes, to_percent  # noqa: PLC0415

    loc = [e for e in examples if e.task == "loc"]
    if not loc:
        return {}
    visible = ("roofed", "minor_damage", "major_damage")
    answers: dict[str, list[str]] = {name: [] for name in TRIVIAL_LOCALISATION}
    for e in loc:
        s = sequences[e.seq]
        answers["every visible building in the last frame"].append(format_boxes(
            [to_percent(b.box, s.size) for b in s.buildings if b.statuses[-1] in visible]))
        answers["every visible building in the first frame"].append(format_boxes(
            [to_percent(b.box, s.size) for b in s.buildings if b.statuses[0] in visible]))
        answers["every building"].append(format_boxes([to_percent(b.box, s.size) for b in s.buildings]))
        answers["no change"].append("none")
    targets = [list(e.boxes) for e in loc]
    return {name: pixel_f1(a, targets).f1 for name, a in answers.items()}


def single_frame_oracle(examples: Sequence[Example], sequences: Sequence[EOSequence]) -> float:
    """Pixel F1 on the ``loc`` questions of an *oracle* that sees the last frame only: it answers every footprint
    whose last-frame status (read from the annotations: roofed, a damaged roof, a cleared lot, a foundation,
    rubble) is in a set ``S``, with the best ``S`` over all sets of statuses, chosen on these very questions.

    No trivial answerer (it reads the statuses and picks its rule on the test set), but a generous bound of what
    one image can show: a demolished building is a cleared lot and a destroyed one rubble in the last frame, but
    so are the static distractor footprints (cleared, rubble, half rubble, foundation in every frame), and a
    constructed building is roofed like the unchanged ones. A last-frame model may approach it; the temporal
    model has to pass it to show that it uses the comparison."""
    import itertools  # noqa: PLC0415

    from .conversation import format_boxes, to_percent  # noqa: PLC0415
    from .synth import STATUSES  # noqa: PLC0415

    loc = [e for e in examples if e.task == "loc"]
    if not loc:
        return float("nan")
    targets = [list(e.boxes) for e in loc]
    looks = [st for st in STATUSES if st != "absent"]
    best = 0.0
    for r in range(1, len(looks) + 1):
        for chosen in itertools.combinations(looks, r):
            answers = [format_boxes([to_percent(b.box, sequences[e.seq].size) for b in sequences[e.seq].buildings
                                     if b.statuses[-1] in chosen]) for e in loc]
            best = max(best, pixel_f1(answers, targets).f1)
    return best


def answer_prior(train: Sequence[Example], test: Sequence[Example], task: str) -> float:
    """Accuracy on ``task`` of always giving the most common training answer (the answer prior)."""
    from collections import Counter  # noqa: PLC0415

    tr = [e.answer for e in train if e.task == task]
    te = [e.answer for e in test if e.task == task]
    if not tr or not te:
        return float("nan")
    top = Counter(tr).most_common(1)[0][0]
    return sum(a == top for a in te) / len(te)


def question_template(question: str) -> str:
    """The question with its boxes replaced by ``<box>``: what a prior that reads no pixel may condition on."""
    import re  # noqa: PLC0415

    return re.sub(r"\[[0-9, ]+\]", "<box>", question)


def question_prior_answers(data: ExperimentData, task: str) -> list[str]:
    """The question / frame-count prior's answers to the test questions of ``task`` (:func:`question_prior`)."""
    from collections import Counter  # noqa: PLC0415

    by: dict[tuple[str, int], Counter[str]] = {}
    by_q: dict[str, Counter[str]] = {}
    for e in data.train:
        if e.task == task:
            q = question_template(e.question)
            by.setdefault((q, data.train_seqs[e.seq].n_frames), Counter())[e.answer] += 1
            by_q.setdefault(q, Counter())[e.answer] += 1
    test = [e for e in data.test if e.task == task]
    if not by:
        return [""] * len(test)
    prior = sum(by_q.values(), Counter()).most_common(1)[0][0]
    out = []
    for e in test:
        q = question_template(e.question)
        c = by.get((q, data.test_seqs[e.seq].n_frames)) or by_q.get(q)
        out.append(c.most_common(1)[0][0] if c else prior)
    return out


def question_prior(data: ExperimentData, task: str) -> float:
    """Accuracy on ``task`` of the question / frame-count prior: the most common training answer among the
    questions of the same template (:func:`question_template`) on sequences with as many frames (the prompt says
    how many), else the most common answer of the template, else the answer prior. It reads no pixel."""
    test = [e for e in data.test if e.task == task]
    if not test or not any(e.task == task for e in data.train):
        return float("nan")
    return sum(a == e.answer for a, e in zip(question_prior_answers(data, task), test, strict=True)) / len(test)
