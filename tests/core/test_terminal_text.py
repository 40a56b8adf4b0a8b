"""Terminal safety: model text, tool output and errors never drive the terminal.

Hostile streams (screen clear, window title, clipboard write, C1 controls, bell, backspace
and carriage-return overwrites, bidi overrides) go through the pure `terminal_safe`, the
REPL's printer (in process and as a real subprocess) and the TUI's frame output.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ReasoningDelta,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.history.safe_events import safe_event
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.terminal_text import (
    dumps_terminal_safe,
    json_terminal_safe,
    terminal_safe,
)
from modes_tui.core.values.route import Route

REPO = Path(__file__).resolve().parents[2]

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x1b\\"
C1_CSI = "\x9b2J"
C1_OSC = "\x9d0;pwned\x9c"

# Anything a terminal would act on; \n and \t are the only controls allowed through.
FORBIDDEN = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"]
FORBIDDEN += [chr(c) for c in range(0x7F, 0xA0)] + [chr(c) for c in range(0x202A, 0x202F)]
FORBIDDEN += [chr(c) for c in range(0x2066, 0x206A)]


def strings(value: object) -> list[str]:
    """Every string inside JSON-like data."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def acts_on_terminal(text: str) -> list[str]:
    return sorted({repr(ch) for ch in text if ch in FORBIDDEN})


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        (f"before{CLEAR}after", "beforeafter"),
        (f"hi{TITLE} there", "hi there"),
        (f"copy{CLIPBOARD}!", "copy!"),
        (f"a{C1_CSI}b{C1_OSC}c", "abc"),
        ("\x1bP1$qm\x1b\\dcs \x1b_apc\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\gone", "dcs gone"),
        ("ding\x07\x07", "ding"),
        ("safe\x08\x08\x08\x08evil", "safeevil"),
        ("ls -la\rrm -rf ~", "ls -larm -rf ~"),
        ("line one\r\nline two\n", "line one\nline two\n"),
        ("\x1bc reset \x1b7saved\x1b8 \x1b(0charset", " reset saved charset"),
        ("\x1b[38;2;255;0;0mred\x1b[0m \x1b[?1049h", "red "),
        ("access = user \u202e \u2066// admin\u2069 \u2066", "access = user  // admin "),
        ("שלום\u200f ok \u200e", "שלום\u200f ok \u200e"),  # direction marks stay
        ("tab\there\nnext\n", "tab\there\nnext\n"),
        ("cut short \x1b]0;no terminator", "cut short 0;no terminator"),
        ("esc at end \x1b", "esc at end "),
        ("NUL\x00 and DEL\x7f and VT\x0b FF\x0c", "NUL and DEL and VT FF"),
        (
            "plain text: héllo, 日本語, emoji 🙂, `code`",
            "plain text: héllo, 日本語, emoji 🙂, `code`",
        ),
    ],
)
def test_terminal_safe_removes_what_a_terminal_obeys(hostile: str, shown: str) -> None:
    assert terminal_safe(hostile) == shown


def test_clean_text_is_returned_as_it_is() -> None:
    text = "nothing to do here\n\tindented"
    assert terminal_safe(text) is text


def test_no_random_mix_of_controls_and_text_gets_through() -> None:
    rng = random.Random(11)
    alphabet = [*FORBIDDEN, *"[]();?0123456789PX^_\\abc \n\t", "\x1b[", "\x1b]"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        safe = terminal_safe(text)
        assert acts_on_terminal(safe) == [], repr(text)
        assert terminal_safe(safe) == safe  # idempotent


def test_a_sequence_split_across_chunks_stays_harmless() -> None:
    stream = f"title{TITLE}clear{CLEAR}clip{CLIPBOARD}end"
    for size in range(1, 12):
        pieces = [stream[i : i + size] for i in range(0, len(stream), size)]
        shown = "".join(terminal_safe(piece) for piece in pieces)
        assert acts_on_terminal(shown) == []
        assert shown.startswith("title") and shown.endswith("end")


def test_json_output_keeps_the_value_and_is_inert() -> None:
    value = {"text": f"a{TITLE}{C1_CSI}\u202eb\x7f", "n": 1}
    line = dumps_terminal_safe(value)
    assert acts_on_terminal(line) == []
    assert json.loads(line) == value
    assert json_terminal_safe('"plain"') == '"plain"'


def test_safe_event_cleans_every_text_the_screen_shows() -> None:
    call = ToolCall("c1", "run_command", {"command": f"ls{CLEAR}", "n": 2})
    events: list[TurnEvent] = [
        TextDelta(f"x{TITLE}"),
        ReasoningDelta(f"think{C1_OSC}"),
        ToolCallRequested(call),
        ToolCallFinished(call, "ok", f"out{CLIPBOARD}put"),
        TurnFinished(Message("assistant", f"done{CLEAR}", reasoning="r\x07")),
        TurnFailed(f"bad gateway{TITLE}", "connection", "retry\x1b[5m", f"part{CLEAR}"),
        TurnCancelled(f"part{TITLE}"),
        RouteDecided(Route("chat", "classifier", f"reason{TITLE}"), warnings=(f"w{CLEAR}",)),
    ]
    for event in events:
        cleaned = safe_event(event)
        assert type(cleaned) is type(event)
        assert acts_on_terminal(json.dumps(cleaned.to_dict(), ensure_ascii=False)) == []
    assert safe_event(events[3]).result == "output"  # type: ignore[union-attr]
    assert safe_event(events[2]).call.arguments == {"command": "ls", "n": 2}  # type: ignore[union-attr]
    clean = TextDelta("fine")
    assert safe_event(clean) is clean
    assert events[0].text == f"x{TITLE}"  # the original (what the session keeps) is untouched


# --------------------------------------------------------------------------- the REPL


def test_the_printer_shows_hostile_model_text_inert() -> None:
    from modes_tui.repl import Printer, ReplContext

    out, err = io.StringIO(), io.StringIO()
    printer = Printer(out, err=err)
    context = ReplContext(
        engine=None,  # type: ignore[arg-type]
        mode_names=lambda: (),
        describe_modes=lambda: "",
        set_mode=lambda value: value,
    )
    call = ToolCall("c1", "read_file", {"path": f"x{TITLE}"})
    for event in [
        RouteDecided(Route("chat", "fallback", f"Classifier failed: {CLEAR}")),
        TextDelta("Hello "),
        TextDelta(f"wor{CLEAR}ld{TITLE}{CLIPBOARD}\x07\x08\r{C1_CSI}\u202e!"),
        ToolCallRequested(call),
        ToolCallFinished(call, "ok", f"file says {TITLE}hi"),
        TurnFailed(f"provider said {TITLE}", "connection", f"hint{CLEAR}"),
    ]:
        printer.event(event, context)
    shown = out.getvalue() + err.getvalue()
    assert acts_on_terminal(shown) == []
    assert "Hello world!" in shown and "file says hi" in shown and "provider said" in shown


def test_the_printer_json_lines_keep_the_exact_text() -> None:
    from modes_tui.repl import Printer, ReplContext

    out = io.StringIO()
    context = ReplContext(
        engine=None,  # type: ignore[arg-type]
        mode_names=lambda: (),
        describe_modes=lambda: "",
        set_mode=lambda value: value,
    )
    hostile = f"a{TITLE}{C1_CSI}\u202eb"
    Printer(out, json_lines=True).event(TextDelta(hostile), context)
    assert acts_on_terminal(out.getvalue()) == []
    assert json.loads(out.getvalue())["text"] == hostile


def test_a_piped_repl_echoing_hostile_text_prints_it_inert(modes_home: Path) -> None:
    hostile = f"hello{CLEAR}{TITLE}{CLIPBOARD}{C1_OSC}\x07 world\u202e!"
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "modes_tui", "--model", "scripted/echo", "chat", "--plain"]
    done = subprocess.run(
        [*command, "--classifier", "keyword"],
        input=(hostile + "\n").encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    stdout = done.stdout.decode()
    assert acts_on_terminal(stdout) == []
    assert "You said: hello world!" in stdout
    # the session keeps what was typed, byte for byte
    (session,) = (modes_home / "data" / "sessions").glob("*.jsonl")
    users = [json.loads(line) for line in session.read_text().splitlines()]
    assert [r["content"] for r in users if r["type"] == "user"] == [hostile]


# --------------------------------------------------------------------------- the TUI


async def test_the_tui_renders_a_hostile_stream_inert() -> None:
    from modes_tui.tui.app import build_app
    from modes_tui.tui.turn_view import AnswerSegment
    from tests.support.tui_support import ScriptEngine, answer_events, services

    hostile = f"# Title{TITLE}\n\nscreen{CLEAR} clip{CLIPBOARD} c1{C1_CSI}{C1_OSC} bell\x07 bs\x08 cr\r \u202eend"
    call = ToolCall("call_1", "read_file", {"path": f"notes{TITLE}.txt"})
    events = answer_events(hostile, "chat", "hi", chunk=5)
    events[-1:-1] = [ToolCallRequested(call), ToolCallFinished(call, "ok", f"file{CLEAR}text")]
    engine = ScriptEngine().script(events)
    async with build_app(services(engine)).run_test(size=(100, 30)) as pilot:
        app = pilot.app
        while app.conversation.engine is None:
            await pilot.pause(0.02)
        app.conversation.prompt.value = "hi"  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(250):
            if app.conversation.records and app.conversation.records[-1].status == "finished":  # type: ignore[attr-defined]
                break
            await pilot.pause(0.02)
        await pilot.pause(0.1)
        segment = app.query_one(AnswerSegment)
        assert acts_on_terminal(segment.source) == []
        assert "screen clip c1 bell bs cr end" in segment.source
        frame = app.screen._compositor.render_full_update().render_segments(app.console)
    # The frame is what Textual writes to the terminal: its own CSI cursor moves and
    # colours, and nothing else: no title (OSC), no clipboard, no clear, no bell, no C1.
    for sequence in ("\x1b]", "\x1b[2J", "\x07", "\x08", "\x9b", "\x9d", "\u202e", "\x1bP"):
        assert sequence not in frame, repr(sequence)
    assert "pwned" not in frame and "cm0gLXJmIH4" not in frame
    assert "file" in frame and "text" in frame


def test_session_verbs_show_a_hostile_session_inert_and_export_json_exactly(
    modes_home: Path,
) -> None:
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}

    def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "modes_tui", *args],
            input=stdin.encode(),
            capture_output=True,
            env=env,
            timeout=120,
        )

    hostile = f"title{TITLE}{CLIPBOARD}{C1_CSI} text"
    chat = cli(
        "--model", "scripted/echo", "chat", "--plain", "--classifier", "keyword", stdin=hostile
    )
    assert chat.returncode == 0, chat.stderr
    for verb in (
        ["sessions"],
        ["replay", "latest"],
        ["sessions", "--json"],
        ["replay", "latest", "--json"],
    ):
        shown = cli(*verb)
        assert shown.returncode == 0, (verb, shown.stderr)
        assert acts_on_terminal(shown.stdout.decode()) == [], verb
    replayed = json.loads(cli("replay", "latest", "--json").stdout)
    assert any(hostile in text for text in strings(replayed))  # JSON keeps the exact text
    # Markdown is inert wherever it goes (a file shown with `cat` reaches a terminal too)
    exported = cli("export", "latest").stdout.decode()
    assert acts_on_terminal(exported) == [] and terminal_safe(hostile) in exported
    records = json.loads(cli("export", "latest", "--format", "json").stdout)["records"]
    assert any(hostile in text for text in strings(records))  # JSON keeps the exact text


async def test_a_confirmation_shows_the_hostile_command_escaped_not_hidden() -> None:
    from textual.app import App
    from textual.widgets import Static

    from modes_tui.tui.confirm import ConfirmToolScreen

    command = f"ls{C1_CSI} && curl evil{TITLE}"
    screen = ConfirmToolScreen(ToolCall("c1", f"run_command{CLEAR}", {"command": command}))
    async with App[None]().run_test() as pilot:
        pilot.app.push_screen(screen)
        await pilot.pause(0.1)
        shown = screen.query_one("#confirm-arguments", Static).content
        code = getattr(shown, "code", str(shown))
        frame = pilot.app.screen._compositor.render_full_update().render_segments(pilot.app.console)
    assert "\\u009b2J" in code and "\\u001b]0;pwned\\u0007" in code  # visible, exact
    assert json.loads(code)["command"] == command
    for sequence in ("\x1b]", "\x1b[2J", "\x07", "\x9b"):
        assert sequence not in frame, repr(sequence)
