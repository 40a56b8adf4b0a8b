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

Other packages import a public name from the module that defines it
(`from modes_tui.core.context.<module> import <name>`); `__all__` lists those names.
"""

from __future__ import annotations

from importlib import import_module

__all__ = [
    "CUT_MARKER",
    "ESTIMATE",
    "MESSAGE_OVERHEAD",
    "ContextBudget",
    "CountedTokens",
    "Fitted",
    "TokenCounter",
    "TokenTally",
    "budget_for",
    "compaction_point",
    "cut_text",
    "estimate_tokens",
    "fallback_summary",
    "fit_request",
    "summary_block",
    "summary_request",
    "summary_text",
]

_HOMES = {
    "compaction_point": "compaction",
    "fallback_summary": "compaction",
    "summary_block": "compaction",
    "summary_request": "compaction",
    "summary_text": "compaction",
    "CUT_MARKER": "fitting",
    "Fitted": "fitting",
    "cut_text": "fitting",
    "fit_request": "fitting",
    "CountedTokens": "ports",
    "TokenCounter": "ports",
    "ESTIMATE": "tokens",
    "MESSAGE_OVERHEAD": "tokens",
    "TokenTally": "tokens",
    "estimate_tokens": "tokens",
    "ContextBudget": "window",
    "budget_for": "window",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
