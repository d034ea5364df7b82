"""iclr25.llm_regret: *Do LLM Agents Have Regret? A Case Study in Online Learning and Games* (Park, Liu,
Ozdaglar & Zhang, ICLR 2025).

Online-learning environments (the paper's loss families, full information and bandit), agents behind one
interface (Hedge, FTRL, FTPL, FTL, EXP3, uniform, any callable, LLMs through an OpenAI-compatible endpoint
or a local Hugging Face model), the paper's regret statistics (trend test, log-log slope), repeated games
with equilibrium gaps, and the regret-loss that trains no-regret transformers (torch, imported on first use).
"""

from importlib.metadata import version as _version

from .agents import AGENTS as AGENTS
from .agents import EXP3 as EXP3
from .agents import FTL as FTL
from .agents import FTPL as FTPL
from .agents import FTRL as FTRL
from .agents import CallableAgent as CallableAgent
from .agents import Hedge as Hedge
from .agents import Uniform as Uniform
from .agents import make_agent as make_agent
from .agents import project_simplex as project_simplex
from .environments import FAMILIES as FAMILIES
from .environments import loss_sequences as loss_sequences
from .games import CLASSIC_GAMES as CLASSIC_GAMES
from .games import Game as Game
from .games import GameRun as GameRun
from .games import cce_gap as cce_gap
from .games import classic_game as classic_game
from .games import duality_gap as duality_gap
from .games import play as play
from .games import random_general_sum as random_general_sum
from .games import random_zero_sum as random_zero_sum
from .games import zero_sum_value as zero_sum_value
from .llm import MAX_PARSE_FAILURE_RATE as MAX_PARSE_FAILURE_RATE
from .llm import ON_PARSE_FAILURE as ON_PARSE_FAILURE
from .llm import HFCausalLM as HFCausalLM
from .llm import LLMAgent as LLMAgent
from .llm import OpenAIChat as OpenAIChat
from .llm import ParsedPolicy as ParsedPolicy
from .llm import ParseFailureError as ParseFailureError
from .llm import build_bandit_prompt as build_bandit_prompt
from .llm import build_prompt as build_prompt
from .llm import parse_policy as parse_policy
from .llm import read_transcript as read_transcript
from .llm import repair_prompt as repair_prompt
from .llm import replay_transcript as replay_transcript
from .online import OnlineRun as OnlineRun
from .online import regret_curves as regret_curves
from .online import run_online as run_online
from .quantal import QuantalFit as QuantalFit
from .quantal import fit_quantal_response as fit_quantal_response
from .quantal import quantal_response as quantal_response
from .regret_loss import LSAStructure as LSAStructure
from .regret_loss import RegretLossConfig as RegretLossConfig
from .regret_loss import RegretLossResult as RegretLossResult
from .regret_loss import TrainedAgent as TrainedAgent
from .regret_loss import lsa_structure as lsa_structure
from .regret_loss import make_lsa as make_lsa
from .regret_loss import make_transformer as make_transformer
from .regret_loss import regret_loss as regret_loss
from .regret_loss import train_regret_loss as train_regret_loss
from .stats import RegretStats as RegretStats
from .stats import Slope as Slope
from .stats import TrendTest as TrendTest
from .stats import Verdict as Verdict
from .stats import dynamic_regret as dynamic_regret
from .stats import no_regret_verdict as no_regret_verdict
from .stats import regret_slope as regret_slope
from .stats import regret_statistics as regret_statistics
from .stats import swap_regret as swap_regret
from .stats import trend_test as trend_test

__version__ = _version("iclr25-llm-regret")

__all__ = [
    "AGENTS", "EXP3", "FTL", "FTPL", "FTRL", "CallableAgent", "Hedge", "Uniform", "make_agent", "project_simplex",
    "FAMILIES", "loss_sequences",
    "CLASSIC_GAMES", "Game", "GameRun", "cce_gap", "classic_game", "duality_gap", "play", "random_general_sum",
    "random_zero_sum", "zero_sum_value",
    "HFCausalLM", "LLMAgent", "MAX_PARSE_FAILURE_RATE", "ON_PARSE_FAILURE", "OpenAIChat", "ParseFailureError",
    "ParsedPolicy", "build_bandit_prompt", "build_prompt", "parse_policy", "read_transcript", "repair_prompt",
    "replay_transcript",
    "OnlineRun", "regret_curves", "run_online",
    "QuantalFit", "fit_quantal_response", "quantal_response",
    "LSAStructure", "RegretLossConfig", "RegretLossResult", "TrainedAgent", "lsa_structure", "make_lsa",
    "make_transformer", "regret_loss", "train_regret_loss",
    "RegretStats", "Slope", "TrendTest", "Verdict", "dynamic_regret", "no_regret_verdict", "regret_slope", "regret_statistics", "swap_regret",
    "trend_test",
    "__version__",
]
