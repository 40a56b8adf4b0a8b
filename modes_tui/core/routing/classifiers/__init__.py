"""Classifier backends and the one place that builds them from `router.yaml`.

`keyword` lives here in the core. The others need a model or an encoder; the caller
passes them in through `ClassifierServices`, so the core never imports litellm or torch.
`chat` and `judge` share one base, `model_classifier.ModelClassifier` (the routing prompt,
the call through the `ChatModel` port, its timeout); each fills in only how the answer is
asked for and how the reply is read.

    cascade.py           The cascade backend: a cheap classifier first, a stronger one only when
                         it is unsure
    chat.py              The chat backend: one structured-output call to a chat model
    embedding.py         The embedding backend: nearest examples and descriptions per mode,
                         through an `Encoder`
    embedding_cache.py   Example vectors on disk (`EmbeddingCache`), one file per encoder, keyed
                         by each text
    head.py              The calibrated head of the embedding backend: which mode, how sure, and
                         is it in scope
    head_fit.py          Fitting a head's weights: multinomial logistic regression (L-BFGS in
                         numpy) and a shrinkage-LDA (Mahalanobis) discriminant, both giving
                         `z = q W + b`
    head_refit.py        Refitting the head after corrections, and the check that keeps learning
                         from hurting
    judge.py             The judge backend: one single-token answer, read through its log
                         probabilities
    keyword.py           The keyword backend: deterministic rules from each profile's
                         `keywords:`
    learned_head.py      One roster's head in use, refitted in the background when the
                         corrections change
    mode_index.py        A roster's vectors and the scoring formula of the embedding backend
                         (`ModeIndex`)
    model_classifier.py  What the model-backed routing backends (`chat`, `judge`) share: one
                         call to a chat model
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from modes_tui.core.errors import DeclarationError, Problem
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.ports import Classifier, CorrectionSource

__all__ = ["BackendFactory", "ClassifierServices", "build_classifier"]

BackendFactory = Callable[[Pack, "ClassifierServices"], Classifier]


@dataclass
class ClassifierServices:
    """What non-keyword backends need, supplied by the wiring layer (modes_tui.runtime)."""

    factories: dict[str, BackendFactory]
    """Backend name -> factory, for backends that live outside the core."""
    default_model: str = "default"
    """The model id that `default` stands for."""
    corrections: CorrectionSource | None = None
    """The corrections the backends learn from; None: the pack's store in the data dir."""


def build_classifier(
    pack: Pack, name: str | None = None, services: ClassifierServices | None = None
) -> Classifier:
    """The classifier called `name` (default: the pack's), ready to route."""
    from modes_tui.core.routing.classifiers.keyword import KeywordClassifier

    # name the source the user can fix: the option/setting, or the pack's router.yaml
    source = (
        "router.yaml"
        if not name or name == pack.router.classifier
        else "--classifier (or the router_classifier setting)"
    )
    name = name or pack.router.classifier
    if name == "keyword":
        return KeywordClassifier()
    if name.startswith("python:"):
        return _import_classifier(name, pack)
    if services is not None and name in services.factories:
        return services.factories[name](pack, services)
    known = ["keyword", *(services.factories if services else ())]
    raise DeclarationError(
        [
            Problem(
                source,
                "classifier" if source == "router.yaml" else "",
                f"backend {name!r} is not available here; available: {', '.join(known)}",
            )
        ],
        pack=pack.name,
    )


def _import_classifier(spec: str, pack: Pack) -> Classifier:
    """`python:package.module:object`: an object with `classify`, or a class to build."""
    target = spec.removeprefix("python:")
    module_name, _, attribute = target.partition(":")
    problem = None
    obj: Any = None
    try:
        obj = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        problem = f"cannot import {target!r}: {error}"
    if obj is not None and isinstance(obj, type):
        obj = obj()
    if problem is None and not callable(getattr(obj, "classify", None)):
        problem = (
            f"{target!r} has no classify(message, history, modes, instructions, inputs) method"
        )
    if problem is not None:
        raise DeclarationError([Problem("router.yaml", "classifier", problem)], pack=pack.name)
    classifier: Classifier = obj
    return classifier
