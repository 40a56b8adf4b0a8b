"""Evaluating a router on a pack's cases: the cases, the scoring, the report text.

    cases.py    Eval files: JSON Lines of messages and the mode each should route to
    learning.py  `eval --learn`: a user who corrects every wrong route, and the learning curve
    report.py   Evaluation results as the terminal shows them: the report, calibration, the
                threshold fit
    scoring.py  Routing evaluation: score routes against an eval file's cases, fit the threshold

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .cases import read_eval_file
from .learning import format_curve, learn_from_cases
from .report import format_fit, format_report
from .scoring import (
    SURE,
    Outcome,
    case_rows,
    evaluate,
    fit_threshold,
    judge,
    percentile,
    route_cases,
    wrong_sure,
)

__all__ = ["format_curve", "format_fit", "format_report", "learn_from_cases", "read_eval_file"]
__all__ += ["SURE", "Outcome", "case_rows", "evaluate", "fit_threshold", "judge", "percentile"]
__all__ += ["route_cases", "wrong_sure"]
