"""Evaluation results as the terminal shows them: the report, calibration, the threshold fit."""

from __future__ import annotations

from modes_tui.core.evals.scoring import EvalReport, Fit


def _cell(value: float | None, width: int = 9) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.2f}"


def format_report(report: EvalReport, *, title: str = "") -> str:
    """The report as the terminal shows it."""
    lines = [title] if title else []
    threshold = "off" if report.threshold is None else f"{report.threshold:.2f}"
    in_scope = report.in_scope_accuracy
    lines.append(
        f"accuracy {report.accuracy:.3f} ({report.correct}/{report.cases})   "
        f"in-scope accuracy {'-' if in_scope is None else f'{in_scope:.3f}'}   "
        f"macro-F1 {report.macro_f1:.3f}   below_confidence {threshold}"
    )
    fb = report.fallback
    lines.append(
        f"fallback: precision {_cell(fb.precision, 0).strip()}  recall {_cell(fb.recall, 0).strip()}"
        f"  (cases expecting it: {fb.support}, routes that fell back: {fb.routed})"
    )
    if report.latency_p50_ms is not None and report.latency_p95_ms is not None:
        lines.append(
            f"latency: p50 {report.latency_p50_ms:.1f} ms   p95 {report.latency_p95_ms:.1f} ms"
        )
    if report.follow_ups or report.switches:
        lines.append(_conversation_line(report))
    if report.errors:
        lines.append(f"classifier errors: {report.errors} routes fell back because it failed")
    if report.ece is not None:
        lines += ["", *format_reliability(report)]
    width = max([len(n) for n in report.per_mode] + [8])
    lines += ["", f"{'mode':<{width}} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>8}"]
    for name, score in report.per_mode.items():
        if not (score.support or score.routed):
            continue
        lines.append(
            f"{name:<{width}} {_cell(score.precision)} {_cell(score.recall)} "
            f"{_cell(score.f1)} {score.support:>8}"
        )
    columns = [c for c in report.columns if any(row.get(c) for row in report.confusion.values())]
    columns = columns or list(report.columns)
    lines += ["", "confusion (rows: expected, columns: routed; fallback = fell back)"]
    col = max([len(c) for c in columns] + [4])
    lines.append(f"{'':<{width}} " + " ".join(f"{c:>{col}}" for c in columns))
    for row, counts in report.confusion.items():
        lines.append(f"{row:<{width}} " + " ".join(f"{counts.get(c, 0):>{col}}" for c in columns))
    return "\n".join(lines)


def _conversation_line(report: EvalReport) -> str:
    """Follow-ups (expected to stay in the previous mode) and switches, scored apart."""
    follow, switch = report.follow_up_accuracy, report.switch_accuracy
    return (
        f"conversation: follow-up accuracy {'-' if follow is None else f'{follow:.3f}'} "
        f"({report.follow_ups_correct}/{report.follow_ups})   "
        f"switch accuracy {'-' if switch is None else f'{switch:.3f}'} "
        f"({report.switches_correct}/{report.switches})"
    )


def format_reliability(report: EvalReport) -> list[str]:
    """ECE and the reliability table: is a confidence of 0.8 right 80% of the time?"""
    lines = [
        f"calibration: ECE {report.ece:.3f} (mean gap between confidence and accuracy, "
        "by confidence bin; null cases count as wrong)",
        f"{'confidence':<11} {'routes':>7} {'mean conf':>10} {'accuracy':>9}",
    ]
    for row in report.reliability:
        if not row.count:
            continue
        lines.append(
            f"{row.low:.1f}-{row.high:.1f}{'':<4} {row.count:>7} {_cell(row.confidence, 10)} "
            f"{_cell(row.accuracy)}"
        )
    return lines


def format_fit(fit: Fit, current: float | None) -> str:
    """The threshold table and the pick, both sides of the trade."""
    lines = [
        "below_confidence  in-scope acc  fallback recall  fallback precision  accuracy  balance"
    ]
    for row in fit.rows:
        mark = "  <- pick" if row is fit.best else ""
        if current is not None and abs(row.threshold - current) < 1e-9:
            mark += "  (current)"
        lines.append(
            f"{row.threshold:>16.2f}  {_cell(row.in_scope_accuracy, 12)}  "
            f"{_cell(row.fallback_recall, 15)}  {_cell(row.fallback_precision, 18)}  "
            f"{row.accuracy:>8.2f}  {row.balance:>7.2f}{mark}"
        )
    best = fit.best
    lines.append("")
    if not fit.has_null_cases:
        lines.append(
            "the file has no null cases, so fallback recall cannot be measured and the pick "
            'only maximises in-scope accuracy; add out-of-scope lines with "mode": null'
        )
    lines.append(
        f"pick: below_confidence {best.threshold:.2f} (in-scope accuracy "
        f"{'-' if best.in_scope_accuracy is None else f'{best.in_scope_accuracy:.2f}'}, "
        f"fallback recall {'-' if best.fallback_recall is None else f'{best.fallback_recall:.2f}'}); "
        "set it in the pack's router.yaml"
    )
    return "\n".join(lines)
