"""iclr25.teochat: *TEOChat: A Large Vision-Language Assistant for Temporal Earth Observation Data* (Irvin,
Liu, Chen, Dormoy, Kim, Khanna, Zheng & Ermon, ICLR 2025).

A procedural generator of dated, shuffled temporal earth-observation sequences with TEOChatlas-style
conversations (temporal scene classification, change localisation, damage classification, referring
expressions, QA, region QA, temporal referring, their single-image variants); the TEOChat architecture at small
scale (shared per-frame encoder, projector, interleaved ``image i :`` references, chronological sorting, a
causal LM with rotary positions, answer-only loss, greedy decoding); the paper's metrics with the reference
code's bugs fixed; baselines (last-frame-only, no-reference, a siamese change-detection specialist); a loader
for a user's own dated PNG/GeoTIFF sequences, the same prompting on a local Hugging Face LLaVA model or an
OpenAI-compatible endpoint, and two small shipped checkpoints (``load_pretrained``).
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from .assistant import Assistant as Assistant
    from .assistant import TrainConfig as TrainConfig
    from .assistant import train_assistant as train_assistant
    from .conversation import TASKS as TASKS
    from .conversation import Example as Example
    from .conversation import Vocabulary as Vocabulary
    from .conversation import build_prompt as build_prompt
    from .conversation import format_boxes as format_boxes
    from .conversation import make_examples as make_examples
    from .endpoint import EndpointAssistant as EndpointAssistant
    from .metrics import DamageF1 as DamageF1
    from .metrics import PixelF1 as PixelF1
    from .metrics import TaskScores as TaskScores
    from .metrics import accuracy as accuracy
    from .metrics import damage_f1 as damage_f1
    from .metrics import evaluate_predictions as evaluate_predictions
    from .metrics import parse_boxes as parse_boxes
    from .metrics import pixel_f1 as pixel_f1
    from .metrics import rasterize_boxes as rasterize_boxes
    from .metrics import shuffled_label_chance as shuffled_label_chance
    from .model import ModelConfig as ModelConfig
    from .model import TinyTEOChat as TinyTEOChat
    from .pretrained import load_pretrained as load_pretrained
    from .sequences import load_dataset as load_dataset
    from .sequences import load_sequence as load_sequence
    from .sequences import save_dataset as save_dataset
    from .specialist import SiameseChangeDetector as SiameseChangeDetector
    from .specialist import train_specialist as train_specialist
    from .synth import SCENES as SCENES
    from .synth import EOSequence as EOSequence
    from .synth import generate_sequences as generate_sequences

__version__ = _version("iclr25-teochat")

# Public names are imported on first use (PEP 562): `iclr25 teochat --help` does not pay for torch.
_EXPORTS = {
    "Assistant": "assistant",
    "TrainConfig": "assistant",
    "train_assistant": "assistant",
    "TASKS": "conversation",
    "EndpointAssistant": "endpoint",
    "Example": "conversation",
    "Vocabulary": "conversation",
    "build_prompt": "conversation",
    "format_boxes": "conversation",
    "make_examples": "conversation",
    "DamageF1": "metrics",
    "PixelF1": "metrics",
    "TaskScores": "metrics",
    "accuracy": "metrics",
    "damage_f1": "metrics",
    "evaluate_predictions": "metrics",
    "parse_boxes": "metrics",
    "pixel_f1": "metrics",
    "rasterize_boxes": "metrics",
    "shuffled_label_chance": "metrics",
    "ModelConfig": "model",
    "TinyTEOChat": "model",
    "load_pretrained": "pretrained",
    "load_sequence": "sequences",
    "save_dataset": "sequences",
    "load_dataset": "sequences",
    "SiameseChangeDetector": "specialist",
    "train_specialist": "specialist",
    "SCENES": "synth",
    "EOSequence": "synth",
    "generate_sequences": "synth",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

__all__ = [*_EXPORTS, "__version__"]
