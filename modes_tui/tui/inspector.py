"""The inspector: the exact request of one turn beside its response and usage."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import tzinfo
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Collapsible, Footer, Markdown, Static

from modes_tui.core.edits.policy import Policy
from modes_tui.core.history.events import RequestBuilt
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.terminal_text import json_terminal_safe
from modes_tui.route_format import duration
from modes_tui.tui.render import route_card, tool_summary
from modes_tui.tui.status import model_label


def estimate_tokens(text: str) -> int:
    """A rough count (four characters a token), labelled as such wherever shown."""
    return (len(text) + 3) // 4


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


def _json(value: Any) -> Syntax:
    return Syntax(
        # inert (C1 and bidi escaped) and without registered secret values
        json_terminal_safe(json.dumps(value, indent=2, ensure_ascii=False, default=str)),
        "json",
        word_wrap=True,
        background_color="default",
    )


def request_sections(built: RequestBuilt) -> list[tuple[str, RenderableType, bool]]:
    """(title, body, expanded) for each part of a request, in the order the model reads it."""
    request = built.request
    messages = [dict(m) for m in request.messages]
    system = [m for m in messages if m.get("role") == "system"]
    history = [m for m in messages if m.get("role") != "system"]
    sections: list[tuple[str, RenderableType, bool]] = []
    system_text = "\n\n".join(_content(m) for m in system)
    sections.append(
        (
            f"System prompt: base prompt + {built.mode or 'no'} mode instructions"
            f" · ≈{estimate_tokens(system_text)} tokens",
            Text(system_text or "(none)"),
            True,
        )
    )
    tools = [tool.to_dict() for tool in request.tools]
    tools_text = json.dumps(tools)
    sections.append(
        (
            f"Tools: {len(tools)} · ≈{estimate_tokens(tools_text) if tools else 0} tokens",
            _json(tools) if tools else Text("(no tools in this mode)", style="dim"),
            False,
        )
    )
    lines: list[RenderableType] = []
    for message in history:
        role = str(message.get("role", "?"))
        line = Text(f"{role}: ", style="bold")
        line.append(_content(message))
        if message.get("tool_calls"):
            line.append(f"  [tool calls: {json.dumps(message['tool_calls'], default=str)}]")
        lines.append(line)
    history_text = "".join(_content(m) for m in history)
    sections.append(
        (
            f"History window: {len(history)} messages · ≈{estimate_tokens(history_text)} tokens",
            Group(*lines) if lines else Text("(empty)", style="dim"),
            True,
        )
    )
    params: dict[str, Any] = {
        "model": request.model,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "reasoning_effort": request.reasoning_effort,
        **dict(request.extra),
    }
    body: list[RenderableType] = [_json(params)]
    body += [Text(f"! {note}", style="yellow") for note in built.notes]
    if built.context is not None:  # how it was fitted, and whether the count is an estimate
        body.append(Text(f"context window: {built.context.describe()}"))
    sections.append(("Parameters", Group(*body), True))
    sections.append(("Exact request (JSON, secrets redacted)", _json(request.to_dict()), False))
    return sections


class InspectorScreen(Screen[None]):
    """What one turn sent and got back."""

    DEFAULT_CSS = """
    InspectorScreen > #inspector-title {
        dock: top;
        height: 1;
        background: $panel;
        padding: 0 1;
        text-style: bold;
    }
    InspectorScreen > Horizontal { height: 1fr; }
    InspectorScreen VerticalScroll {
        width: 1fr;
        padding: 0 1;
    }
    InspectorScreen #request { border-right: tall $panel; }
    InspectorScreen .heading {
        text-style: bold;
        color: $accent;
        margin: 1 0 0 0;
    }
    InspectorScreen Collapsible { padding: 0; margin: 0; }
    InspectorScreen Collapsible Static { padding: 0 0 0 1; }
    InspectorScreen Markdown { padding: 0 1; margin: 0; }
    """

    BINDINGS: ClassVar = [
        Binding("escape,q", "app.pop_screen", "Close", id="inspector.close"),
        Binding("c", "copy_request", "Copy request JSON", id="inspector.copy"),
    ]

    def __init__(
        self, record: TurnTranscript, *, tz: tzinfo | None = None, policy: Policy | None = None
    ) -> None:
        super().__init__()
        self.record = record
        self._tz = tz
        self.policy = policy
        """What the turn's mode may do (its `permissions:` and `paths:`), when known."""

    def compose(self) -> ComposeResult:
        record = self.record
        title = Text(f"Inspector · turn #{record.number} · ")
        title.append(record.mode or "no mode")
        if record.model:
            title.append(f" · {model_label(record.model)}")
        yield Static(title, id="inspector-title")
        with Horizontal():
            with VerticalScroll(id="request"):
                yield from self._request_widgets()
            with VerticalScroll(id="response"):
                yield from self._response_widgets()
        yield Footer()

    def _request_widgets(self) -> list[Widget]:
        record = self.record
        widgets: list[Widget] = []
        if not record.requests:
            reason = (
                "No request was sent: the turn failed or was cancelled before the model was called."
                if record.status in ("failed", "cancelled")
                else "No request yet."
            )
            return [Static("Request", classes="heading"), Static(reason)]
        for built in record.requests:
            heading = "Request" if len(record.requests) == 1 else f"Request, round {built.round}"
            widgets.append(Static(heading, classes="heading"))
            for title, body, expanded in request_sections(built):
                widgets.append(Collapsible(Static(body), title=title, collapsed=not expanded))
        if self.policy is not None:
            tools = [tool.name for tool in record.requests[-1].request.tools]
            body = Text("\n".join(self.policy.lines(tools)))
            widgets.append(Collapsible(Static(body), title="What this mode may do", collapsed=True))
        return widgets

    def _response_widgets(self) -> list[Widget]:
        record = self.record
        widgets: list[Widget] = [Static("Route", classes="heading")]
        widgets.append(Static(route_card(record, tz=self._tz)))
        widgets.append(Static("Response", classes="heading"))
        if record.answer:
            widgets.append(Markdown(record.answer))
        else:
            widgets.append(Static(Text("(no answer text)", style="dim")))
        if record.cancelled:
            widgets.append(Static(Text("cancelled: the answer is partial", style="yellow")))
        if record.failure is not None:
            failure = record.failure
            widgets.append(
                Static(Text(f"failed ({failure.kind}): {failure.error}\n{failure.hint}", "red"))
            )
        if record.reasoning:
            widgets.append(
                Collapsible(Static(Text(record.reasoning)), title="Reasoning", collapsed=True)
            )
        for compacted in record.compactions:
            compaction = compacted.compaction
            widgets.append(
                Collapsible(
                    Static(Text(compaction.summary)),
                    title=escape(compaction.describe()),  # a model's name: no markup from it
                    collapsed=True,
                )
            )
        if record.tools:
            widgets.append(Static(f"Tool calls: {len(record.tools)}", classes="heading"))
            for activity in record.tools:
                widgets.append(Static(tool_summary(activity, limit=None)))  # every line
                widgets.append(
                    Collapsible(
                        Static(Text(activity.result)),
                        title=escape(  # a model named the tool: no markup from it
                            f"{activity.call.name}'s result as the model read it "
                            f"({len(activity.result)} characters)"
                        ),
                        collapsed=True,
                    )
                )
        widgets.append(Static("Usage", classes="heading"))
        widgets.append(Static(self._usage_text()))
        return widgets

    def _usage_text(self) -> RenderableType:
        record = self.record
        if not record.usages:
            return Text("(no usage reported)", style="dim")
        lines = []
        for index, usage in enumerate(record.usages, 1):
            cost = f" · ${usage.cost:.6f}" if usage.cost else ""
            lines.append(
                Text(
                    f"call {index}: {usage.model} · {usage.prompt_tokens} prompt + "
                    f"{usage.completion_tokens} completion tokens{cost}"
                )
            )
        total = record.cost
        lines.append(
            Text(
                f"total: {record.prompt_tokens + record.completion_tokens} tokens"
                + (f" · ${total:.6f}" if total else ""),
                style="bold",
            )
        )
        if record.route is not None and record.route.duration_ms is not None:
            lines.append(Text(f"routing took {duration(record.route.duration_ms)}", style="dim"))
        return Group(*lines)

    def action_copy_request(self) -> None:
        """Copy the exact request(s) as JSON."""
        data = [built.request.to_dict() for built in self.record.requests]
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
        self.app.copy_to_clipboard(json_terminal_safe(text))
        self.notify("Request JSON copied to the clipboard")
