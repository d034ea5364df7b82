"""iclr25.mmed_rag: *MMed-RAG: Versatile Multimodal RAG System for Medical Vision Language Models* (Xia, Zhu, Li,
Wang, Shi, Wang, Zhang, Zou & Yao, ICLR 2025), at toy scale on procedural three-domain data.

A procedural radiology/pathology/ophthalmology generator; the domain router; per-domain CLIP retrievers behind a
persistent sharded index (faiss flat/HNSW, hnswlib, numpy); adaptive context selection (the paper's gap rule,
the code's ratio rule, fixed k); a tiny vision-language model with SFT, preference-pair mining and DPO (RAG-PT);
evaluation (VQA accuracy/F1/AUC, BLEU/ROUGE-L, copy and harm rates, recall@k). Heavy modules (torch, faiss)
are imported on first use.
"""

from importlib.metadata import version as _version
from typing import TYPE_CHECKING

from iclr25.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from .checkpoint import TrainedSystem as TrainedSystem
    from .checkpoint import load_system as load_system
    from .checkpoint import make_checkpoint as make_checkpoint
    from .data import DOMAINS as DOMAINS
    from .data import FINDINGS as FINDINGS
    from .data import MedDataset as MedDataset
    from .data import Splits as Splits
    from .data import check_images as check_images
    from .data import domain_index as domain_index
    from .data import generate as generate
    from .data import generate_splits as generate_splits
    from .data import harmonize as harmonize
    from .data import load_dataset as load_dataset
    from .data import make_report as make_report
    from .data import question as question
    from .data import read_report as read_report
    from .data import render as render
    from .data import vqa_items as vqa_items
    from .dpo import DPOOutput as DPOOutput
    from .dpo import dpo_loss as dpo_loss
    from .dpo import sequence_logps as sequence_logps
    from .endpoint import EndpointVLM as EndpointVLM
    from .experiments import PipelineConfig as PipelineConfig
    from .experiments import PipelineResult as PipelineResult
    from .experiments import evaluate_system as evaluate_system
    from .experiments import run_pipeline as run_pipeline
    from .index import BACKENDS as BACKENDS
    from .index import DomainIndex as DomainIndex
    from .index import Retrieved as Retrieved
    from .index import SearchResult as SearchResult
    from .index import VectorIndex as VectorIndex
    from .metrics import context_precision as context_precision
    from .metrics import copying as copying
    from .metrics import harm_rate as harm_rate
    from .metrics import noise_accuracy as noise_accuracy
    from .metrics import recall_at_k as recall_at_k
    from .metrics import report_finding_accuracy as report_finding_accuracy
    from .metrics import report_metrics as report_metrics
    from .metrics import vqa_metrics as vqa_metrics
    from .preference import Examples as Examples
    from .preference import PreferencePairs as PreferencePairs
    from .preference import mine_preferences as mine_preferences
    from .preference import mine_report_preferences as mine_report_preferences
    from .preference import train_dpo as train_dpo
    from .preference import train_sft as train_sft
    from .rag import Contexts as Contexts
    from .rag import RetrievalConfig as RetrievalConfig
    from .rag import RetrievalSystem as RetrievalSystem
    from .retriever import CLIPRetriever as CLIPRetriever
    from .retriever import clip_loss as clip_loss
    from .retriever import train_retriever as train_retriever
    from .router import Router as Router
    from .router import train_router as train_router
    from .selection import RULES as RULES
    from .selection import Selection as Selection
    from .selection import fixed_select as fixed_select
    from .selection import gap_select as gap_select
    from .selection import ratio_select as ratio_select
    from .selection import select_contexts as select_contexts
    from .selection import to_positive as to_positive
    from .supervised import ImageOnlyModel as ImageOnlyModel
    from .supervised import fit_image_only as fit_image_only
    from .supervised import image_only_accuracy as image_only_accuracy
    from .supervised import mean_colour_domain_accuracy as mean_colour_domain_accuracy
    from .text import Vocab as Vocab
    from .vlm import TinyVLM as TinyVLM
    from .vlm import VLMConfig as VLMConfig
    from .vlm import encode_prompts as encode_prompts
    from .vlm import generate_reports as generate_reports
    from .vlm import noise_images as noise_images
    from .vlm import yes_probability as yes_probability

__version__ = _version("iclr25-mmed-rag")

_EXPORTS = {
    **{n: "data" for n in ("DOMAINS", "FINDINGS", "MedDataset", "Splits", "check_images", "domain_index",
                           "generate", "generate_splits", "harmonize", "load_dataset", "make_report", "question", "read_report",
                           "render", "vqa_items")},
    **{n: "dpo" for n in ("DPOOutput", "dpo_loss", "sequence_logps")},
    "EndpointVLM": "endpoint",
    **{n: "checkpoint" for n in ("TrainedSystem", "load_system", "make_checkpoint")},
    **{n: "index" for n in ("BACKENDS", "DomainIndex", "Retrieved", "SearchResult", "VectorIndex")},
    **{n: "retriever" for n in ("CLIPRetriever", "clip_loss", "train_retriever")},
    **{n: "router" for n in ("Router", "train_router")},
    **{n: "selection" for n in ("RULES", "Selection", "fixed_select", "gap_select", "ratio_select",
                                "select_contexts", "to_positive")},
    "Vocab": "text",
    **{n: "supervised" for n in ("ImageOnlyModel", "fit_image_only", "image_only_accuracy",
                                 "mean_colour_domain_accuracy")},
    **{n: "experiments" for n in ("PipelineConfig", "PipelineResult", "evaluate_system", "run_pipeline")},
    **{n: "metrics" for n in ("context_precision", "copying", "harm_rate", "noise_accuracy", "recall_at_k",
                              "report_finding_accuracy", "report_metrics", "vqa_metrics")},
    **{n: "preference" for n in ("Examples", "PreferencePairs", "mine_preferences", "mine_report_preferences",
                                 "train_dpo", "train_sft")},
    **{n: "rag" for n in ("Contexts", "RetrievalConfig", "RetrievalSystem")},
    **{n: "vlm" for n in ("TinyVLM", "VLMConfig", "encode_prompts", "generate_reports", "noise_images",
                          "yes_probability")},
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = [*_EXPORTS, "__version__"]
