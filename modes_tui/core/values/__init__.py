"""The values core's parts hand each other: route, decision, correction, framing, doubt.

The turn's route and the classifier's decision, a correction, a line of history, the framing
of a message, the router's doubt and evidence.

    correction.py  A user saying "this turn belonged to mode Y" (`Correction`), as a value
    doubt.py       Doubt: when the router is unsure, the route says so, with its pick and the
                   runner-up (`ask_below`, `ask_margin`)
    entry.py       One line of history as a classifier sees it (`HistoryEntry`)
    evidence.py    What decided a route: the nearest example, correction or description
                   (`Evidence`)
    framing.py     Framing: a message's request, split from what it quotes or pastes, and the
                   quoted kinds as weak evidence
    numbers.py     How a probability or confidence is written: two decimals, at most 0.99
    recorded.py    Errors as a route keeps them (plain data, read back as `RecordedError`)
    route.py       The router's answer: `Route`, `Decision`, `ClassifierInfo`, `RoutedTurn`

They sit just above core's top level (of core they import only `errors`), so that packs,
history, routing and evals all read them and none of those imports another for a value.
Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .correction import Correction, new_correction_id
from .doubt import ASK_BELOW, ASK_MARGIN, Unsure, doubt
from .entry import HistoryEntry
from .evidence import Evidence, EvidenceKind
from .framing import PLACEHOLDER, SCAN_LIMIT, Framing, QuotedKind, kind_of, split_message
from .numbers import rounded_probabilities, two_places
from .recorded import RecordedError, error_to_dict, failure_reason
from .route import ClassifierInfo, DecidedBy, Decision, Route, RoutedTurn

__all__ = ["ASK_BELOW", "ASK_MARGIN", "Correction", "Unsure", "doubt", "new_correction_id"]
__all__ += ["Evidence", "EvidenceKind", "HistoryEntry"]
__all__ += ["PLACEHOLDER", "SCAN_LIMIT", "Framing", "QuotedKind", "kind_of", "split_message"]
__all__ += ["RecordedError", "error_to_dict", "failure_reason", "two_places"]
__all__ += ["rounded_probabilities"]
__all__ += ["ClassifierInfo", "DecidedBy", "Decision", "Route", "RoutedTurn"]
