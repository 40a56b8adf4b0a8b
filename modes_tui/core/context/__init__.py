"""Conversations that fit: token counting, fitting a request into its window, compaction.

    ports.py        TokenCounter (a model's own tokenizer; the llm adapter implements it)
    tokens.py       TokenTally: the tokenizer where known, else the stated estimate
    window.py       ContextBudget: the model's window minus room for the answer
    fitting.py      fit_request: cut oversized tool results, leave out the oldest turns
    compaction.py   where to compact, the summary model's messages, the fallback summary,
                    the summary block of the system part

The values these leave behind (`Compaction`, `ContextReport`) live in `core.history`, which
records them; the engine calls this package through `core.engine.fitter`. Headless like all
of core: a tokenizer comes in through `TokenCounter`.

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

# Eager: the surface is used (tests import from the package); each module is small and
# imports only the standard library and core.history's values (nothing on first paint).
from .compaction import (
    compaction_point,
    fallback_summary,
    summary_block,
    summary_problem,
    summary_request,
    summary_text,
)
from .fitting import CUT_MARKER, Fitted, cut_text, fit_request
from .ports import CountedTokens, TokenCounter
from .tokens import ESTIMATE, MESSAGE_OVERHEAD, TokenTally, estimate_tokens
from .window import ContextBudget, budget_for

__all__ = ["compaction_point", "fallback_summary", "summary_block", "summary_problem"]
__all__ += ["CUT_MARKER", "Fitted", "cut_text", "fit_request", "summary_request", "summary_text"]
__all__ += ["CountedTokens", "TokenCounter"]
__all__ += ["ESTIMATE", "MESSAGE_OVERHEAD", "TokenTally", "estimate_tokens"]
__all__ += ["ContextBudget", "budget_for"]
