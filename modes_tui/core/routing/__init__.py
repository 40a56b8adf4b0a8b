"""Choosing a mode for a message: the router, its classifiers, and what they learn from.

What the router reads (the input window, the routing prompt), follow-ups, the classifiers,
and what they learn from (corrections, calibration, learning).

    calibration.py  Calibrated confidence: leave-one-out scores of a pack, the fitted
                    temperature, and ECE
    continuity.py   Follow-ups by meaning: how close a message is to the recent turns of the
                    current mode, from the classifier's cached vectors
    corrections.py  Corrections held in memory (`MemoryCorrections`, `EMPTY_CORRECTIONS`)
    follow_up.py    Follow-ups: how much a message leans on the turn before it, read from the
                    message alone
    imperative.py   Whether a message opens with a verb and its object: a request complete in
                    itself
    input.py        What a classifier sees of a conversation: the routed message and the history
                    before it
    learning.py     How the backends learn from corrections: examples for the embedding backend,
                    the most similar corrections for the chat and judge prompts
    made.py         What a request asks to be made ("write a go function that ...") decides
                    over what it is about
    ports.py        What routing needs from outside it: an encoder for the embedding backend, a
                    classifier, and a source of corrections to learn from
    prompt.py       The routing prompt, built from the roster and never written by hand per pack
    quoted.py       Weak evidence beside a request's decision: what a message quotes counts by
                    its kind
    router.py       The router: which mode takes this turn, who decided, how sure, and why
    steps.py        The router's steps after the classifier: quoted evidence, what is made, the
                    conversation
    vague.py        First messages that point at nothing ("fix it"): sent to the fallback
    classifiers/    Classifier backends and the one place that builds them from `router.yaml`

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .calibration import ReliabilityBin, expected_calibration_error, reliability
from .classifiers import BackendFactory, ClassifierServices, build_classifier
from .classifiers.cascade import CascadeClassifier
from .classifiers.chat import ChatClassifier
from .classifiers.embedding import EmbeddingCache, EmbeddingClassifier
from .classifiers.judge import LABELS, JudgeClassifier
from .corrections import EMPTY_CORRECTIONS, MemoryCorrections
from .input import split_transcript
from .ports import Classifier, CorrectionSource, Encoder
from .router import Router, routed_alone

__all__ = ["ReliabilityBin", "expected_calibration_error", "reliability"]
__all__ += ["BackendFactory", "CascadeClassifier", "ClassifierServices", "build_classifier"]
__all__ += ["LABELS", "ChatClassifier", "EmbeddingCache", "EmbeddingClassifier", "JudgeClassifier"]
__all__ += ["EMPTY_CORRECTIONS", "MemoryCorrections", "split_transcript"]
__all__ += ["Classifier", "CorrectionSource", "Encoder", "Router", "routed_alone"]
