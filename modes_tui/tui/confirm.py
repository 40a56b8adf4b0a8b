"""Asking the user before a tool runs: the dialog and the `Confirmer` the engine calls.

A dialog says exactly what will happen: its title names it (the command, the file, the
mode), the body shows it whole (a command verbatim: wrapped, newlines and quotes as they are,
only what a terminal would obey written as visible escapes; an edit's diff; a mode and why),
and a line names the rule that asked ("asked by shell's run_command: ask").
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Button, Static, TextArea

from modes_tui.core.edits.editor import Change
from modes_tui.core.engine.questions import (
    ANSWER_ARMING_SECONDS,
    ModeChoice,
    Question,
    RuleNote,
    verbatim,
)
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.terminal_text import json_terminal_safe, terminal_safe
from modes_tui.tui.arming import Answer, ArmedDialog, Clock
from modes_tui.tui.render import diff_text

if TYPE_CHECKING:
    from textual.app import App


class ConfirmToolScreen(ArmedDialog[bool]):
    """Run this tool call? Yes runs it; No tells the model the user refused. Armed after a
    moment (`tui.arming`): keys typed before that go to the prompt."""

    DEFAULT_CSS = """
    ConfirmToolScreen { align: center middle; }
    ConfirmToolScreen > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        max-height: 80%;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    ConfirmToolScreen #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmToolScreen #confirm-command {
        max-height: 20;
        overflow-y: auto;
        background: $boost;
        padding: 0 1;
    }
    ConfirmToolScreen #confirm-arguments { max-height: 20; overflow-y: auto; }
    ConfirmToolScreen #confirm-rule { color: $text-muted; margin-top: 1; }
    ConfirmToolScreen #confirm-diff { max-height: 30; overflow-y: auto; }
    ConfirmToolScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmToolScreen Button { margin-left: 2; }
    """

    BINDINGS: ClassVar = [
        Binding("y", "answer(True)", "Run", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "Refuse", id="confirm.no"),
    ]

    ANSWER_HINT = "y runs it · n or Esc refuses"
    FOCUS_WHEN_ARMED = "refuse"

    def __init__(
        self,
        call: ToolCall,
        description: str = "",
        preview: Change | None = None,
        rule: RuleNote | None = None,
        **arming: Any,
    ) -> None:
        super().__init__(**arming)
        self.call = call
        self.description = description
        self.preview = preview
        """The change a write_file / edit_file call would make, shown as its diff."""
        self.rule = rule
        """The policy rule that asks (None: the tool asks by its nature, no policy said so)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(), id="confirm-title")
            if self.preview is not None:
                # made terminal-safe by core.edits.diffs: escapes in the file are shown as text
                yield Static(diff_text(self.preview.diff, DIFF_LINES_SHOWN), id="confirm-diff")
            elif (command := self._command()) is not None:
                yield Static(Text(verbatim(command)), id="confirm-command")
            else:
                if self.description:
                    # an MCP server wrote it: nothing in it may drive the terminal
                    yield Static(Text(terminal_safe(self.description), style="dim"))
                # escaped, not removed: what is about to run is shown exactly, and inert
                arguments = json_terminal_safe(
                    json.dumps(dict(self.call.arguments), indent=2, ensure_ascii=False)
                )
                yield Static(Syntax(arguments, "json", word_wrap=True), id="confirm-arguments")
            if self.rule is not None:
                line = terminal_safe(self.rule.line())  # a mode's name comes from a pack
                yield Static(Text(line[:1].upper() + line[1:]), id="confirm-rule")
            yield self.hint()
            with Horizontal():
                yield Button("Refuse (n)", variant="error", id="refuse")
                label = "Run (y)" if self.preview is None else "Apply (y)"
                yield Button(label, variant="success", id="run")

    def answer_hint(self) -> str:
        """A change is applied, a command is run: the hint says which."""
        return self.ANSWER_HINT if self.preview is None else "y applies it · n or Esc refuses"

    def _command(self) -> str | None:
        """The command line a `run_command` call would run (None: another tool)."""
        command = self.call.arguments.get("command")
        return command if self.call.name == "run_command" and isinstance(command, str) else None

    def _title(self) -> Text:
        if self.preview is not None:
            title = Text("Apply this change? ")
            title.append(self.preview.summary, style="bold cyan")
            return title
        command = self._command()
        if command is not None:
            lines = command.strip().splitlines() or [""]
            short = lines[0] if len(lines[0]) <= TITLE_CHARS else lines[0][: TITLE_CHARS - 1] + "…"
            if len(lines) > 1:
                short += f" … (+{len(lines) - 1} line{'s' if len(lines) > 2 else ''})"
            title = Text("Run ")
            title.append(verbatim(short), style="bold cyan")
            title.append("?")
            return title
        return tool_title(self.call)

    @on(Button.Pressed, "#run")
    def _run(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#refuse")
    def _refuse(self) -> None:
        self.dismiss(False)

    def action_answer(self, answer: bool) -> None:
        """Close with `answer` (a footer click before arming is no answer either)."""
        if self.answers_now():
            self.dismiss(answer)


DIFF_LINES_SHOWN = 400
"""A longer diff is cut in the dialog (the tool's result and the log keep all of it)."""

TITLE_CHARS = 60
"""A command's first line is cut to this many characters in the title (the body has it all)."""

PATH_VERBS = {"read_file": "Read", "list_files": "List the files in", "search_files": "Search"}
"""What a path tool does, for the title of its question."""


def tool_title(call: ToolCall) -> Text:
    """The title of a question about a call that is neither a command nor an edit: what it
    does to which path for the built-in readers, else the tool's name (its arguments follow)."""
    path = call.arguments.get("path", ".")
    verb = PATH_VERBS.get(call.name)
    if verb is not None and isinstance(path, str):
        title = Text(f"{verb} ")
        title.append(terminal_safe(path), style="bold cyan")
        pattern = call.arguments.get("pattern")
        if call.name == "search_files" and isinstance(pattern, str):
            title.append(" for ")
            title.append(terminal_safe(pattern), style="bold cyan")
        title.append("?")
        return title
    title = Text("Let the model call ")
    title.append(terminal_safe(call.name), style="bold cyan")
    title.append("?")
    return title


class QuestionScreen(ArmedDialog[bool]):
    """A yes/no question about the next turn (entering a confirm-first mode, the budget),
    armed like the tool confirmation."""

    DEFAULT_CSS = """
    QuestionScreen { align: center middle; }
    QuestionScreen > Vertical {
        width: 80%;
        max-width: 90;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    QuestionScreen #question-title { text-style: bold; margin-bottom: 1; }
    QuestionScreen #question-rule { color: $text-muted; margin-top: 1; }
    QuestionScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    QuestionScreen Button { margin-left: 2; }
    """

    BINDINGS: ClassVar = [
        Binding("y", "answer(True)", "Yes", id="question.yes"),
        Binding("n,escape", "answer(False)", "No", id="question.no"),
    ]

    ANSWER_HINT = "y: yes · n or Esc: no"
    FOCUS_WHEN_ARMED = "no"

    def __init__(self, question: Question, **arming: Any) -> None:
        super().__init__(**arming)
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(terminal_safe(self.question.title)), id="question-title")
            yield Static(Text(terminal_safe(self.question.text)), id="question-text")
            if self.question.rule:
                rule = f"Asked by {self.question.rule}"
                yield Static(Text(terminal_safe(rule)), id="question-rule")
            yield self.hint()
            with Horizontal():
                yield Button("No (n)", variant="error", id="no")
                yield Button("Yes (y)", variant="success", id="yes")

    @on(Button.Pressed, "#yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def _no(self) -> None:
        self.dismiss(False)

    def action_answer(self, answer: bool) -> None:
        """Close with `answer` (a footer click before arming is no answer either)."""
        if self.answers_now():
            self.dismiss(answer)


class DialogConfirmer:
    """The engine's `Confirmer` (and `Asker`, and `Chooser`): asks through `ConfirmToolScreen`,
    `QuestionScreen` or `doubt.DoubtScreen` and waits for the answer.

    `clock` and `arming` say when a dialog starts taking answers (tests pass a clock they
    move by hand); keys typed before that go to the prompt of the app's chat screen."""

    def __init__(
        self, app: App[Any], *, clock: Clock = time.monotonic, arming: float = ANSWER_ARMING_SECONDS
    ) -> None:
        self.app = app
        self.clock = clock
        self.arming = arming

    async def confirm(self, call: ToolCall, tool: Any, preview: Change | None = None) -> bool:
        """True when the user lets the call run (`preview`: the change it makes, as a diff)."""
        description = str(getattr(tool, "description", "") or "")
        screen = ConfirmToolScreen(call, description, preview, **self._arming())
        return await self._yes(screen)

    async def confirm_by_rule(
        self, call: ToolCall, tool: Any, preview: Change | None, rule: RuleNote
    ) -> bool:
        """`confirm`, with the policy rule that asks named in the dialog."""
        description = str(getattr(tool, "description", "") or "")
        screen = ConfirmToolScreen(call, description, preview, rule, **self._arming())
        return await self._yes(screen)

    def allowed_by_rule(self, call: ToolCall, rule: RuleNote) -> None:
        """Nothing to ask: the tool card shows the call, the panel's policy line the rules."""

    async def ask(self, question: Question) -> bool:
        """True when the user says yes to entering a mode or passing the budget."""
        return await self._yes(QuestionScreen(question, **self._arming()))

    async def choose(self, choice: ModeChoice) -> str | None:
        """The mode the user takes when the router is unsure (the doubt dialog)."""
        from modes_tui.tui.doubt import DoubtScreen, answer_keys

        keys = answer_keys(self.app, choice.modes)
        screen = DoubtScreen(choice, keys, **self._arming())
        return await self._show(screen, choice.unsure.pick)

    def _arming(self) -> dict[str, Any]:
        return {"clock": self.clock, "arming": self.arming, "prompt": self._prompt()}

    def _prompt(self) -> TextArea | None:
        """The prompt on the chat screen (the first one), wherever the user is now."""
        try:
            return self.app.screen_stack[0].query_one("#prompt", TextArea)
        except (NoMatches, IndexError):
            return None

    async def _yes(self, screen: ArmedDialog[bool]) -> bool:
        """Whether the user said yes in `screen`."""
        answer: bool | None = await self._show(screen, False)
        return bool(answer)

    async def _show(self, screen: ArmedDialog[Answer], cancelled: Answer) -> Answer | None:
        """Push `screen` and wait for its answer (`cancelled` closes it when the turn is)."""
        answer: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()

        def done(result: Answer | None) -> None:
            if not answer.done():
                answer.set_result(result)

        self.app.push_screen(screen, callback=done)
        try:
            return await answer
        except asyncio.CancelledError:
            if screen.is_attached:
                screen.dismiss(cancelled)
            raise
