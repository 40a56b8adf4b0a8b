"""The doubt dialog: the router is unsure, so the user picks the mode before the turn runs.

The engine asks through `DialogConfirmer.choose` (`core.engine.doubt_choice`) when the route
is unsure (`Route.unsure`: the pick below router.yaml's `ask_below`, the runner-up within
`ask_margin`, or the pick just under the fallback threshold: then the fallback is offered
first and the pick second). The dialog shows the message, the pick and the runner-up with their
confidences; one key takes either:

    Enter or 1   the router's pick (Esc too: nothing changes); for a pick just under the
                 threshold, the fallback
    2            the runner-up; for a pick just under the threshold, that pick
    a mode key   any mode (the pack's F-keys, as on the main screen)

A choice other than the pick is recorded as a correction, like ctrl+e's. It is armed like
every dialog (`tui.arming`): keys typed before a quiet moment, and a letter or digit inside a
word typed on, go to the prompt, so a `2` of "ipv2 or" never answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from modes_tui.core.engine.questions import ModeChoice
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.core.values.numbers import two_places
from modes_tui.tui.arming import ANSWER_KEYS, ArmedDialog
from modes_tui.tui.keys import normal_keymap

if TYPE_CHECKING:
    from textual.app import App

PICK_KEYS = ("enter", "1", "escape")
"""Keys that take the router's pick (Enter through the focused button)."""
RUNNER_UP_KEY = "2"
MESSAGE_CHARS = 160
"""The message is shown up to this many characters (then "…")."""
WAITING = (
    "The router is waiting for your pick (after a pause in typing). "
    "What you type goes to your message."
)


def answer_keys(app: App[Any], modes: Sequence[str]) -> dict[str, str]:
    """Key -> mode: the pack's mode keys as the app binds them (after the user's keymap)."""
    mode_keys = getattr(app, "mode_keys", [])
    keymap: Mapping[str, str] = {}
    if getattr(app, "started", False):
        keymap = normal_keymap(app.services.keymap, list(modes))  # type: ignore[attr-defined]
    keys: dict[str, str] = {}
    for mode_key in mode_keys:
        bound = keymap.get(mode_key.binding_id, mode_key.key or "")
        for key in (k.strip() for k in bound.split(",")):
            if key and mode_key.mode in modes and key not in (*PICK_KEYS, RUNNER_UP_KEY):
                keys[key] = mode_key.mode
    return keys


def _cut(text: str, limit: int) -> str:
    """`text` on one line, cut with "…" past `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _confidence(value: float | None) -> str:
    return "  —  " if value is None else two_places(value)


class DoubtScreen(ArmedDialog[str]):
    """Which mode answers this message? The router's pick, its runner-up, or any mode."""

    DEFAULT_CSS = """
    DoubtScreen { align: center middle; }
    DoubtScreen > Vertical {
        width: 90%;
        max-width: 76;
        height: auto;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }
    DoubtScreen #doubt-title { text-style: bold; }
    DoubtScreen #doubt-message { color: $text-muted; margin-bottom: 1; }
    DoubtScreen .doubt-row { text-wrap: nowrap; text-overflow: ellipsis; }
    DoubtScreen #doubt-others { color: $text-muted; margin-top: 1; }
    DoubtScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    DoubtScreen Button { margin-left: 2; }
    """

    BINDINGS: ClassVar = [
        Binding("1,escape", "take_pick", "Router's pick", id="doubt.pick"),
        Binding(RUNNER_UP_KEY, "take_runner_up", "Runner-up", id="doubt.runner_up"),
    ]

    FOCUS_WHEN_ARMED = "pick"
    WAITING = WAITING

    def __init__(self, choice: ModeChoice, keys: Mapping[str, str], **arming: Any) -> None:
        super().__init__(**arming)
        self.choice = choice
        self.keys = dict(keys)
        """Key -> mode (the pack's mode keys)."""
        self._bindings = BindingsMap.merge(
            [
                self._bindings,
                BindingsMap(
                    Binding(key, f"take({mode!r})", mode, show=False)
                    for key, mode in self.keys.items()
                ),
            ]
        )

    def answer_keys(self) -> frozenset[str]:
        return ANSWER_KEYS - {"y", "n"} | {"1", RUNNER_UP_KEY, *self.keys}

    def answer_hint(self) -> str:
        unsure = self.choice.unsure
        keys = " · a mode's key: that mode" if self.keys else ""
        return f"Enter: {unsure.pick} · 2: {unsure.runner_up}{keys} · Esc: {unsure.pick} runs"

    def compose(self) -> ComposeResult:
        unsure = self.choice.unsure
        why = {
            "low": "its pick is not confident",
            "close": "two modes are almost as likely",
            "threshold": f"{unsure.runner_up} fell just short of the threshold",
        }[unsure.why]
        with Vertical():
            yield Static(
                Text(f"The router is unsure ({why}): which mode answers?"), id="doubt-title"
            )
            message = terminal_safe(_cut(self.choice.message, MESSAGE_CHARS))
            yield Static(Text(f"“{message}”"), id="doubt-message")
            yield Static(
                self._row("Enter", unsure.pick, unsure.pick_confidence, self._pick_note()),
                classes="doubt-row",
                id="doubt-pick",
            )
            yield Static(
                self._row("2", unsure.runner_up, unsure.runner_up_confidence, unsure.roles()[1]),
                classes="doubt-row",
                id="doubt-runner-up",
            )
            yield Static(self._others(), id="doubt-others")
            yield self.hint()
            with Horizontal():
                yield Button(f"{unsure.runner_up} (2)", id="runner-up")
                yield Button(f"{unsure.pick} (Enter)", variant="primary", id="pick")

    def _pick_note(self) -> str:
        what = self.choice.unsure.roles()[0]
        reason = " ".join(self.choice.reason.split())
        return f"{what} · {reason}" if reason else what

    @staticmethod
    def _row(key: str, mode: str, confidence: float | None, note: str) -> Text:
        row = Text(f"{key:<5}  ", style="bold")
        row.append(f"{terminal_safe(mode):<10}", style="bold cyan")
        row.append(f" {_confidence(confidence)}  ")
        row.append(terminal_safe(note), style="dim")  # a reason may quote the message
        return row

    def _others(self) -> Text:
        unsure = self.choice.unsure
        others = [
            f"{key} {mode}"
            for key, mode in self.keys.items()
            if mode not in (unsure.pick, unsure.runner_up)
        ]
        text = Text()
        if others:
            text.append("or any mode: " + " · ".join(others) + "\n")
        text.append(
            "Taking another mode than the pick is recorded as a correction: the router learns."
        )
        return text

    def _take(self, mode: str) -> None:
        if self.answers_now():
            self.dismiss(mode)

    def action_take_pick(self) -> None:
        """The router's pick runs."""
        self._take(self.choice.unsure.pick)

    def action_take_runner_up(self) -> None:
        """The runner-up takes the turn."""
        self._take(self.choice.unsure.runner_up)

    def action_take(self, mode: str) -> None:
        """Any mode takes the turn (its key)."""
        self._take(mode)

    @on(Button.Pressed, "#pick")
    def _pick_pressed(self) -> None:
        self.dismiss(self.choice.unsure.pick)

    @on(Button.Pressed, "#runner-up")
    def _runner_up_pressed(self) -> None:
        self.dismiss(self.choice.unsure.runner_up)
