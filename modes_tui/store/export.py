"""Sessions as text people read: the Markdown transcript, the session list, the reroute table.

The transcript is rendered from the replayed event stream, the same events a UI shows,
so an export cannot drift from what the app displays. It keeps everything that was said:
user text, answers, reasoning (folded), tool calls with their full results, and one route
line per turn.

`write_export` is how an export reaches a file: replaced atomically, never through a link
or into a FIFO or device at that name, mode 0644 (a file the user names to share or keep,
like one a shell redirection makes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, assert_never

from modes_tui.core.edits.editor import EDIT_TOOL_NAMES
from modes_tui.core.files import atomic_write
from modes_tui.core.history import events as ev
from modes_tui.core.history.transcript import TurnTranscript, fold_turn
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.frontend.tool_text import tool_result, tool_title
from modes_tui.route_format import markdown_line
from modes_tui.store.replay import Replay, ReplayedTurn
from modes_tui.store.reroute import NO_MODE, RerouteReport
from modes_tui.store.sessions import SessionSummary

EXPORT_MODE = 0o644
"""An export is the user's file to share; the session log it comes from stays 0600."""


def write_export(path: str | os.PathLike[str], text: str) -> None:
    """Write an export to `path`; FileWriteError (naming the file) for a link, a special
    file, or a folder that cannot take it. The previous file is intact on any failure."""
    atomic_write(path, text.encode("utf-8"), mode=EXPORT_MODE)


def fence(text: str, language: str = "") -> str:
    """A code block whose fence is longer than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """Inline code whose backticks are longer than any run inside (spaced if it starts or
    ends with one)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def session_markdown(replayed: Replay) -> str:
    """The whole session as a readable Markdown transcript, inert on a terminal (it is shown
    on one, and a file of it is too, with `cat`) and without registered secrets."""
    session = replayed.session
    meta = session.meta
    out = [f"# modes-tui session {session.id}", ""]
    for label, key in (("created", "created"), ("pack", "pack"), ("model", "model")):
        if meta.get(key):
            out.append(f"- {label}: {meta[key]}")
    out.append(f"- turns: {len(replayed.turns)}")
    if replayed.problems:
        out += ["", "Problems found while reading the log:", ""]
        out += [f"- {problem}" for problem in replayed.problems]
    for turn in replayed.turns:
        if out[-1] != "":
            out.append("")
        out += turn_markdown(fold(turn), mode=turn.mode, user_recorded=turn.user is not None)
    return terminal_safe("\n".join(out).rstrip() + "\n")


def conversation_markdown(turns: Sequence[TurnTranscript]) -> str:
    """Turns seen in the app, as the same Markdown (when no session log is kept to export),
    inert like `session_markdown`."""
    out = ["# modes-tui conversation", "", f"- turns: {len(turns)}"]
    for turn in turns:
        out.append("")
        out += turn_markdown(turn, mode=turn.mode)
    return terminal_safe("\n".join(out).rstrip() + "\n")


def fold(turn: ReplayedTurn) -> TurnTranscript:
    """A recorded turn folded the way the app folds a live one."""
    transcript = fold_turn(turn.turn, turn.user or "", turn.events)
    transcript.interrupted = turn.interrupted
    return transcript


def _coalesced(events: Iterable[ev.TurnEvent]) -> Iterator[ev.TurnEvent]:
    """Runs of streamed text (or reasoning) deltas as one event: one paragraph, not one per chunk."""
    pending: ev.TextDelta | ev.ReasoningDelta | None = None
    for event in events:
        if pending is not None and type(event) is type(pending):
            assert isinstance(event, ev.TextDelta | ev.ReasoningDelta)
            pending = type(pending)(pending.text + event.text)
            continue
        if pending is not None:
            yield pending
            pending = None
        if isinstance(event, ev.TextDelta | ev.ReasoningDelta):
            pending = event
        else:
            yield event
    if pending is not None:
        yield pending


def turn_markdown(
    turn: TurnTranscript, *, mode: str | None = None, user_recorded: bool = True
) -> list[str]:
    """One turn: its route lines, what the user said, and everything the turn answered, in
    the order it happened (`turn.events`, the stream the transcript folded)."""
    out = [f"## Turn {turn.number}", ""]
    out += _route_lines(turn, mode)
    out += ["**You**", "", turn.user_text if user_recorded else "*(not recorded)*", ""]
    answer = _AnswerMarkdown(mode, interrupted=turn.interrupted)
    for event in _coalesced(turn.events):
        answer.add(event)
    return out + answer.lines()


def _route_lines(turn: TurnTranscript, mode: str | None) -> list[str]:
    """One quoted line per routing decision (a retry decides again), with its warnings."""
    out: list[str] = []
    for decided in turn.decisions:
        out += [f"> route: {markdown_line(decided.route, decided.setting)}", ""]
        out += [f"> warning: {warning}" for warning in decided.warnings]
        if decided.warnings:
            out.append("")
    if turn.route is None:
        out += [f"> route: none recorded; mode {mode or 'no mode (off)'}", ""]
    return out


class _AnswerMarkdown:
    """What a turn answered, event by event: the speaker line, text, reasoning, tool calls,
    corrections and the ending, then the usage of every call (superseded answers' too)."""

    def __init__(self, mode: str | None, *, interrupted: bool) -> None:
        self._mode = mode
        self._interrupted = interrupted
        self._out: list[str] = []
        self._speaker_done = False
        """The speaker line of the answer being written is out (a re-run writes another)."""
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._cost: float | None = None

    def add(self, event: ev.TurnEvent) -> None:
        match event:
            case ev.RequestBuilt():
                self._request(event)
            case ev.ReasoningDelta():
                self._out += ["<details><summary>reasoning</summary>", "", event.text, ""]
                self._out += ["</details>", ""]
            case ev.TextDelta():
                self._text(event)
            case ev.ToolCallRequested():
                title = tool_title(event.call.name, event.call.arguments)
                self._out += [f"Tool call: {code_span(title)}", ""]
            case ev.ToolCallFinished():
                self._tool_result(event)
            case ev.Usage():
                self._usage(event)
            case ev.TurnCancelled():
                self._out += ["*(cancelled by the user)*", ""]
            case ev.TurnCorrected():
                self._corrected(event)
            case ev.TurnFailed():
                self._failed(event)
            case ev.ConversationCompacted():
                self._compacted(event)
            case ev.RouteDecided() | ev.ModeChanged() | ev.TurnFinished():
                pass  # route lines head the turn; the mode is on the speaker line
            case _:
                assert_never(event)

    def _request(self, event: ev.RequestBuilt) -> None:
        """The first request of an answer names its speaker: mode, model, thinking."""
        if self._speaker_done:
            return
        effort = event.request.reasoning_effort
        thinking = f" · thinking {effort}" if effort else ""
        speaker = f"{event.mode or 'no mode'} · {event.request.model}{thinking}"
        self._out += [f"**Assistant** ({speaker})", ""]
        self._out += [f"*note: {note}*" for note in event.notes]
        if event.notes:
            self._out.append("")
        self._speaker_done = True

    def _text(self, event: ev.TextDelta) -> None:
        if not self._speaker_done:  # no request recorded: the turn's mode speaks
            self._out += [f"**Assistant** ({self._mode or 'no mode'})", ""]
            self._speaker_done = True
        self._out += [event.text, ""]

    def _tool_result(self, event: ev.ToolCallFinished) -> None:
        """The status and every line of the output, as the TUI and the REPL show them."""
        found = tool_result(event.outcome, event.result)
        language = ""
        if event.call.name in EDIT_TOOL_NAMES and event.outcome == "ok":
            language = "diff"  # the change it made: a summary line, then the diff
        head = f"Result of `{event.call.name}`: {found.status} ({event.duration_ms:.1f} ms)"
        self._out += [head, ""]
        if found.lines:
            self._out += [fence("\n".join(found.lines), language), ""]

    def _usage(self, event: ev.Usage) -> None:
        self._prompt_tokens += event.prompt_tokens
        self._completion_tokens += event.completion_tokens
        if event.cost is not None:
            self._cost = (self._cost or 0.0) + event.cost

    def _corrected(self, event: ev.TurnCorrected) -> None:
        was = event.answered_mode or "no mode"
        if event.rerun:  # the answer above is superseded; the re-run follows
            self._out += [f"*(answered in {was}, corrected to {event.corrected_mode})*", ""]
            self._speaker_done = False
        else:
            self._out += [
                f"*(counts as a correction of turn {event.turn}: {was} → {event.corrected_mode})*",
                "",
            ]

    def _failed(self, event: ev.TurnFailed) -> None:
        if self._interrupted:
            self._out += ["*(interrupted: the log ends here)*", ""]
        else:
            hint = f" ({event.hint})" if event.hint else ""
            self._out += [f"*(failed: {event.error}{hint})*", ""]

    def _compacted(self, event: ev.ConversationCompacted) -> None:
        compaction = event.compaction
        self._out += [f"<details><summary>{compaction.describe()}</summary>", ""]
        self._out += [compaction.summary, "", "</details>", ""]

    def lines(self) -> list[str]:
        """Everything added, then the usage line (when any call reported tokens)."""
        if not (self._prompt_tokens or self._completion_tokens):
            return self._out
        price = "" if self._cost is None else f", ${self._cost:.4f}"
        usage = (
            f"*usage: {self._prompt_tokens} prompt + {self._completion_tokens} "
            f"completion tokens{price}*"
        )
        return [*self._out, usage, ""]


def _local_time(stamp: str | None) -> str:
    if not stamp:
        return "?"
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], right: Iterable[int] = ()) -> str:
    """Aligned columns; columns listed in `right` are right-aligned."""
    body = [list(map(str, row)) for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *body, strict=False)]
    aligned = set(right)

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if index in aligned else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=False))
        ]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), *(line(row) for row in body)])


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def sessions_table(summaries: Sequence[SessionSummary]) -> str:
    """The session list: id, created, turns, pack, title."""
    rows = [
        (
            s.id,
            _local_time(s.created),
            "?" if s.turns is None else str(s.turns),
            s.pack or "",
            f"({s.problem})" if s.problem else _cut(s.title or "", 60),
        )
        for s in summaries
    ]
    return table(("ID", "CREATED", "TURNS", "PACK", "TITLE"), rows, right=(2,))


def reroute_text(report: RerouteReport, recorded_pack: str | None, classifier: str) -> str:
    """The per-turn table, then agreement, gained and lost modes, and latency."""

    def confidence(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    rows = []
    for turn in report.turns:
        recorded = (turn.recorded_mode or NO_MODE) + ("*" if turn.recorded_missing else "")
        rows.append(
            (
                str(turn.turn),
                recorded,
                turn.recorded_by or "",
                confidence(turn.recorded_confidence),
                turn.new_mode,
                turn.new_by,
                confidence(turn.new_confidence),
                "yes" if turn.changed else "",
                f"{turn.duration_ms:.1f}",
                _cut(turn.text, 48),
            )
        )
    pack_note = f"recorded with pack {recorded_pack}, " if recorded_pack else ""
    out = [
        f"reroute of session {report.session_id} ({pack_note}"
        f"rerouted with pack {report.pack}, classifier {classifier})",
        "",
        table(
            ("TURN", "RECORDED", "BY", "CONF", "NEW", "BY", "CONF", "CHANGED", "MS", "TEXT"),
            rows,
            right=(0, 3, 6, 8),
        ),
        "",
    ]
    summary = report.summary
    if summary.missing_modes:
        out.append(f"* not in pack {report.pack} any more: {', '.join(summary.missing_modes)}")
    if summary.agreement is None:
        out.append("agreement: n/a (no user turns)")
    else:
        out.append(f"agreement: {summary.agreed}/{summary.turns} turns ({summary.agreement:.0%})")
    gained = ", ".join(f"{mode} +{count}" for mode, count in summary.gained.items())
    lost = ", ".join(f"{mode} -{count}" for mode, count in summary.lost.items())
    out.append(f"gained: {gained or 'none'}")
    out.append(f"lost: {lost or 'none'}")
    if summary.latency_p50_ms is not None and summary.latency_p95_ms is not None:
        out.append(
            f"decision latency: p50 {summary.latency_p50_ms:.1f} ms, "
            f"p95 {summary.latency_p95_ms:.1f} ms"
        )
    return "\n".join(out)


def replay_json(replayed: Replay) -> dict[str, Any]:
    """The replayed session as plain data: turns with their events."""
    return {
        "session": replayed.session.id,
        "path": str(replayed.session.path),
        "meta": dict(replayed.session.meta),
        "turns": [
            {
                "turn": turn.turn,
                "user": turn.user,
                "mode": turn.mode,
                "interrupted": turn.interrupted,
                "events": [event.to_dict() for event in turn.events],
            }
            for turn in replayed.turns
        ],
        "problems": [str(problem) for problem in replayed.problems],
    }
