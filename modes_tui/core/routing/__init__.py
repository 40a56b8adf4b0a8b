"""Choosing a mode for a message: the router, what it reads (the input window,
the routing prompt, router.yaml), follow-ups, the classifiers, and what it learns from
(corrections, calibration, learning).

    calibration.py  Calibrated confidence: leave-one-out scores of a pack, the fitted
                    temperature, and ECE
    config.py       `router.yaml`: how a pack's router decides, read and checked
    doubt.py        Doubt: when the router is unsure, the route says so, with its pick and the
                    runner-up (`ask_below`, `ask_margin`)
    corrections.py  Corrections: a user saying "this turn belonged to mode Y", as values the
                    router learns from
    framing.py      Framing: a message's request, split from what it quotes or pastes, and the
                    quoted kinds as weak evidence
    follow_up.py    Follow-ups: how much a message leans on the turn before it, read from the
                    message alone
    input.py        What a classifier sees of a conversation: the routed message and the history
                    before it
    learning.py     How the backends learn from corrections: examples for the embedding backend,
                    the most similar corrections for the chat and judge prompts
    ports.py        What routing needs from outside it: an encoder for the embedding backend, a
                    classifier, and a source of corrections to learn from
    prompt.py       The routing prompt, built from the roster and never written by hand per pack
    quoted.py       Weak evidence beside a request's decision: what a message quotes counts by
                    its kind
    recorded.py     Errors as a route keeps them (plain data, read back as `RecordedError`)
    router.py       The router: which mode takes this turn, who decided, how sure, and why
    steps.py        The router's steps after the classifier: quoted evidence, the conversation
    classifiers/    Classifier backends and the one place that builds them from `router.yaml`

Other packages import a public name from the module that defines it
(`from modes_tui.core.routing.<module> import <name>`);
`__all__` lists those names and is the package's public surface: a name not in it,
or starting with `_`, is private to the package (tests/test_architecture.py).
"""

from __future__ import annotations

__all__ = [
    "LABELS",
    "BackendFactory",
    "CascadeClassifier",
    "ChatClassifier",
    "Classifier",
    "ClassifierServices",
    "Correction",
    "CorrectionSource",
    "EmbeddingCache",
    "EmbeddingClassifier",
    "Encoder",
    "HistoryEntry",
    "JudgeClassifier",
    "ReliabilityBin",
    "Route",
    "Router",
    "RouterConfig",
    "Unsure",
    "build_classifier",
    "expected_calibration_error",
    "format_curve",
    "learn_from_cases",
    "read_router",
    "reliability",
]
