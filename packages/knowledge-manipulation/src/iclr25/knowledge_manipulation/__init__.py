"""iclr25.knowledge_manipulation: *Physics of Language Models: Part 3.2, Knowledge Manipulation*
(Allen-Zhu & Li, ICLR 2025).

A seeded generator of synthetic biographies (bioS) with the paper's augmentations, builders of the four
manipulation tasks (retrieval, classification, comparison, inverse search) with and without chain of
thought, a small rotary GPT trained on packed batches (torch, imported on first use), greedy exact-match
evaluation, knowledge-capacity accounting, a name-token probe, and the same tests on any local Hugging Face
causal LM.
"""

from importlib.metadata import version as _version

from iclr25.utils.lazy import lazy_exports

_EXPORTS = {
    # data (numpy only)
    "ATTRIBUTES": "biography", "MONTHS": "biography", "TEMPLATES": "biography", "REVERSED_TEMPLATES": "biography",
    "Person": "biography", "Population": "biography", "make_population": "biography", "render_bio": "biography",
    "parse_bio": "biography", "write_people_jsonl": "biography", "read_people_jsonl": "biography",
    "TaskSpec": "tasks", "QA": "tasks", "parse_task": "tasks", "build_task": "tasks", "answer_label": "tasks",
    "write_qa_jsonl": "tasks", "retrieval_qas": "tasks",
    "CapacityReport": "capacity", "bits_per_person": "capacity", "capacity_report": "capacity",
    "suggest_model": "capacity",
    "WordTokenizer": "vocabulary",
    # model and training (torch)
    "GPTConfig": "model", "RotaryGPT": "model",
    "TrainConfig": "training", "TrainStats": "training", "EvalResult": "training", "evaluate": "training",
    "ExperimentConfig": "experiments", "ExperimentResult": "experiments", "FinetuneResult": "experiments",
    "PretrainedModel": "experiments", "pretrain": "experiments", "finetune": "experiments",
    "run_experiment": "experiments", "save_pretrained": "experiments", "load_pretrained": "experiments",
    "ProbeResult": "probe", "name_token_probe": "probe",
    # a user's own Hugging Face model
    "HFCausalLM": "hf_eval", "evaluate_hf": "hf_eval",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__version__ = _version("iclr25-knowledge-manipulation")
__all__ = [*_EXPORTS, "__version__"]
