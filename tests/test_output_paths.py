"""Every path that shows text from outside, fed one hostile corpus (issue 20, item 4).

Outside text is model text and reasoning, tool output, MCP descriptions, stored sessions,
search hits, titles, pack files, corrections, error bodies. The corpus holds what a terminal
obeys (OSC 52 clipboard, OSC 0 title, OSC 8 link, CSI clear, C1 CSI, DCS, bell, backspace,
NUL), what reorders or hides text (RLO, LRI, zero-width characters), Rich markup, and a
configured API key. Shown anywhere, none of it may act, and the key never shows.

The paths are enumerated two ways, so a new one cannot be missed:
- `test_every_verb_is_fed_the_corpus`: the set of verbs the parser knows equals the set
  this file runs (`VERB_RUNS`); a new verb fails until it is added here.
- `test_the_command_line_writes_only_through_the_sanitising_sinks`: an AST scan of cli/,
  repl/ and frontend/ finds every print(), input(), .write(), .writelines() and
  prompt; each is inside a registered sink (`SINKS`, each fed the corpus below), passes the
  text through a sanitiser call, or is on the short `NOT_OUTPUT` list. A new raw print fails.
- `test_the_tui_puts_outside_text_in_widgets_only_as_text`: the same for the TUI's widgets
  (Static, Label, notify, Collapsible titles, Markdown, update).
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.cli import main
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.paths import app_dirs
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.store.manage import rename_session
from modes_tui.store.session_log import SessionLog
from tests.support.cli_support import PIPED_CHAT
from tests.support.store_records import request, route

REPO = Path(__file__).resolve().parent.parent
SECRET = "sk-test-1234567890abcdef"
"""A configured key (OPENAI_API_KEY in these tests): it must never be shown."""
CORPUS = (
    "clip\x1b]52;c;cm0gLXJmIH4=\x07 title\x1b]0;pwned\x07 "
    "link\x1b]8;;http://evil.example/\x1b\\here\x1b]8;;\x1b\\ "
    "clear\x1b[2J\x1b[H c1\x9b2J dcs\x1bP1$qm\x1b\\ "
    "rlo\u202eevil lri\u2066x\u2069 nul\x00 bel\x07 bs\x08 "
    f"[red]x[/] zw r\u200dm a\u200bb key {SECRET} end"
)
FORBIDDEN = {chr(c) for c in range(0x20) if chr(c) not in "\n\t"}
FORBIDDEN |= {chr(c) for c in range(0x7F, 0xA0)} | set("\u202a\u202b\u202c\u202d\u202e")
FORBIDDEN |= set("\u2066\u2067\u2068\u2069\u200b\ufeff")


ESCAPED_SEQUENCE = re.compile(r"(?:\\u001b|\\e)\]\S*?(?:\\u0007|\\a|\\u001b\\\\|\\e\\\\)")
"""An OSC sequence written out as JSON or YAML escapes (`\\u001b]0;pwned\\u0007`): inert."""


def problems(shown: str) -> list[str]:
    """What in `shown` a terminal would obey, hide, or what must never be shown. Text loses
    a sequence whole (no `0;pwned` residue); JSON and YAML keep it, escaped."""
    found = sorted({repr(ch) for ch in shown if ch in FORBIDDEN})
    found += [f"joiner next to ASCII at {i}" for i, ch in enumerate(shown) if ch == "\u200d"]
    residue = ESCAPED_SEQUENCE.sub("", shown)
    found += [word for word in ("pwned", "evil.example", SECRET) if word in residue]
    return found


def assert_inert(shown: str, where: object) -> None:
    assert problems(shown) == [], (where, shown[:2000])


# --------------------------------------------------------------------------- the sanitiser


def test_the_sanitiser_on_the_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    from modes_tui.core.redaction import remember_environment

    remember_environment({"OPENAI_API_KEY": SECRET})
    shown = terminal_safe(CORPUS)
    assert_inert(shown, "terminal_safe")
    # removed whole (no `[2J` or `0;pwned` residue); markup stays literal; the rest is kept
    assert shown == (
        "clip title linkhere clear c1 dcs rloevil lrix nul bel bs "
        "[red]x[/] zw rm ab key [redacted] end"
    )
    # an emoji sequence keeps its joiner; text between ASCII letters loses it
    assert terminal_safe("👩\u200d💻 r\u200dm") == "👩\u200d💻 rm"


# --------------------------------------------------------------------------- the CLI's sinks

SINKS = {
    ("modes_tui/cli/common.py", "say"),
    ("modes_tui/cli/common.py", "say_err"),
    ("modes_tui/cli/common.py", "say_json"),
    ("modes_tui/cli/common.py", "ask"),
    ("modes_tui/cli/common.py", "show"),  # the progress bar: numbers only, no outside text
    ("modes_tui/repl/printer.py", "write"),  # Printer.write
    ("modes_tui/repl/printer.py", "warn"),  # Printer.warn
    ("modes_tui/repl/printer.py", "_emit"),  # Printer._emit: only given sanitised text (below)
}
"""Functions that write to the terminal themselves; each is fed the corpus below."""
NOT_OUTPUT = {
    ("modes_tui/cli/mode.py", "control.write"),  # the control file, not the terminal
    ("modes_tui/frontend/modes.py", "control.write"),  # `/mode` in both front ends
    # the terminal keeper's pipe: the saved terminal settings, as JSON, to our own child
    ("modes_tui/cli/terminal_guard.py", "keeper.stdin.write"),
    # the tool question: its name through terminal_safe, its arguments json_terminal_safe
    ("modes_tui/repl/prompt.py", "?.prompt_async"),
}
SANITISERS = {"terminal_safe", "json_terminal_safe", "dumps_terminal_safe", "feed", "flush"}
"""Calls whose result is safe to write (`feed`/`flush`: the TerminalStream of the answer)."""
SAFE_WRITERS = {"say", "say_err", "say_json", "ask", "printer.write", "self.write", "printer.warn"}
SAFE_WRITERS |= {"self.warn"}
OUTPUT_ATTRIBUTES = {"write", "writelines", "prompt_async", "prompt", "_emit"}
SCANNED = [*sorted((REPO / "modes_tui" / "cli").glob("*.py"))]
SCANNED += sorted((REPO / "modes_tui" / "repl").glob("*.py"))
SCANNED += sorted((REPO / "modes_tui" / "frontend").glob("*.py"))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node


def raw_writes(path: Path) -> list[tuple[str, str, int]]:
    """(function, call, line) of every call in `path` that writes to a terminal by itself
    and is neither in a sink nor given sanitised text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    enclosing: dict[int, str] = {}
    for name, function in _functions(tree):
        for inner in ast.walk(function):
            enclosing[id(inner)] = name  # innermost wins: walk order is outer first
    relative = str(path.relative_to(REPO))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func)
        last = called.rsplit(".", 1)[-1]
        is_output = called in {"print", "input"} or (
            isinstance(node.func, ast.Attribute) and last in OUTPUT_ATTRIBUTES
        )
        if not is_output or called in SAFE_WRITERS:
            continue
        function = enclosing.get(id(node), "<module>")
        if (relative, function) in SINKS or (relative, called) in NOT_OUTPUT:
            continue
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant):
            continue  # our own words
        if isinstance(first, ast.Call) and _name(first.func).rsplit(".", 1)[-1] in SANITISERS:
            continue
        found.append((function, called, node.lineno))
    return found


def test_the_command_line_writes_only_through_the_sanitising_sinks() -> None:
    offenders = {str(path.relative_to(REPO)): raw_writes(path) for path in SCANNED}
    assert {path: found for path, found in offenders.items() if found} == {}, (
        "write outside text with say/say_err/say_json/ask (cli) or Printer.write/warn (REPL)"
    )


def test_the_scan_finds_a_raw_print(tmp_path: Path) -> None:
    fake = REPO / "modes_tui" / "cli" / "_scan_probe.py"
    fake.write_text(
        "import sys\n"
        "def leak(text):\n    print(f'hit {text}')\n"
        "def leak2(out, text):\n    out.write(text)\n    sys.stderr.write(text)\n"
        "def fine(text):\n    say(text)\n    print(terminal_safe(text))\n",
        encoding="utf-8",
    )
    try:
        found = raw_writes(fake)
    finally:
        fake.unlink()
    assert [(f, call) for f, call, _ in found] == [
        ("leak", "print"),
        ("leak2", "out.write"),
        ("leak2", "sys.stderr.write"),
    ]


def test_every_sink_shows_the_corpus_inert(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli.common import ask, progress_printer, say, say_err, say_json, warn_problems
    from modes_tui.core.history.events import TextDelta, TurnFailed
    from modes_tui.core.redaction import remember_environment
    from modes_tui.repl import PipeConfirmer, Printer, ReplContext, piped_lines

    remember_environment({"OPENAI_API_KEY": SECRET})
    say_json({"text": CORPUS})
    out = capsys.readouterr()
    assert_inert(out.out, "say_json")
    assert json.loads(out.out)["text"] == CORPUS.replace(SECRET, "[redacted]")  # the value
    say(CORPUS)
    say_err(CORPUS)
    warn_problems([CORPUS])
    monkeypatch.setattr("builtins.input", lambda question: print(question) or "n")
    assert ask(CORPUS) == "n"
    progress_printer()(1, 2)
    out = capsys.readouterr()
    assert_inert(out.out + out.err, "cli sinks")
    assert "[red]x[/]" in out.out  # printed as typed, not styled

    stdout, stderr = io.StringIO(), io.StringIO()
    printer = Printer(stdout, err=stderr)
    context = ReplContext(
        engine=None,  # type: ignore[arg-type]
        mode_names=lambda: (),
        describe_modes=lambda: "",
        set_mode=lambda value: value,
    )
    printer.write(CORPUS)
    printer.warn(CORPUS)
    for piece in (CORPUS[:7], CORPUS[7:40], CORPUS[40:]):
        printer.event(TextDelta(piece), context)
    printer.event(TurnFailed(CORPUS, "auth", CORPUS, CORPUS), context)
    lines = io.StringIO()
    Printer(lines, json_lines=True).event(TextDelta(CORPUS), context)
    assert_inert(lines.getvalue(), "REPL --json")
    list(piped_lines(io.BytesIO(b"a\x00b\xff\n"), stderr))
    monkeypatch.setattr(sys, "stderr", stderr)
    import asyncio

    asyncio.run(PipeConfirmer().confirm(ToolCall("c", CORPUS, {}), None))
    assert_inert(stdout.getvalue() + stderr.getvalue(), "REPL printer")


# --------------------------------------------------------------------------- every verb


def hostile_pack(root: Path) -> Path:
    folder = root / "hostile"
    folder.mkdir()
    (folder / "router.yaml").write_text(
        yaml.safe_dump({"classifier": "keyword", "fallback": "chat"}), encoding="utf-8"
    )
    for name, keyword in (("chat", "hello"), ("code", "python")):
        profile = {"description": f"{name}: {CORPUS}", "keywords": [keyword], "examples": [CORPUS]}
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    return folder


def hostile_session() -> str:
    """A session whose every field shows the corpus; the failure echoes the key (as a record
    written before keys were redacted by value would)."""
    log = SessionLog.create(app_dirs(), pack="hostile", model="openai/gpt-4.1-mini")
    user = Message("user", f"python {CORPUS}")
    log.record("user", 1, content=user.content)
    log.record("route", 1, route=route("code", "classifier", 0.9, CORPUS).to_dict(), setting="auto")
    log.record("request", 1, request=request("code", [user]).to_dict(), mode="code", round=1)
    call = ToolCall("call_1", "read_file", {"path": CORPUS})
    answer = Message("assistant", CORPUS, tool_calls=(call,), mode="code", reasoning=CORPUS)
    log.record("assistant", 1, message=answer.to_dict(), usage=None)
    log.record("tool_result", 1, call=call.to_dict(), outcome="ok", result=CORPUS)
    log.close()
    raw = log.path.read_text(encoding="utf-8")
    failed = {
        "v": 1,
        "type": "assistant",
        "at": "2026-12-03T10:00:00+00:00",
        "turn": 2,
        "message": Message("assistant", "", mode="chat").to_dict(),
        "error": f"auth: Incorrect API key provided: Bearer {SECRET} {CORPUS}",
        "kind": "auth",
    }
    log.path.write_text(raw + json.dumps(failed) + "\n", encoding="utf-8")
    rename_session(log.id, CORPUS, app_dirs())
    return log.id


@pytest.fixture
def hostile_home(
    modes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    from modes_tui.core.values.correction import Correction
    from modes_tui.store.corrections import CorrectionStore

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pack = hostile_pack(tmp_path)
    config = modes_home / "config"
    config.mkdir(exist_ok=True)
    models = {"models": {"odd": {"model": f"openai/{CORPUS}", "headers": {"X-Team": CORPUS}}}}
    (config / "config.yaml").write_text(yaml.safe_dump(models), encoding="utf-8")
    CorrectionStore.for_pack(app_dirs().data, "hostile").add(
        Correction(CORPUS, "code", "chat", created_at="2026-11-30T10:00:00+00:00")
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"text": CORPUS, "mode": "code"}) + "\n", encoding="utf-8")
    return {"pack": str(pack), "session": hostile_session(), "cases": str(cases), "tmp": tmp_path}


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode()), "utf-8"))


VERB_RUNS: dict[str, list[Callable[[dict[str, Any]], list[str]]]] = {
    "profiles": [lambda h: ["profiles", "--profiles", h["pack"]]],
    "tools": [lambda h: ["tools", "--profiles", h["pack"]]],
    "route": [
        lambda h: ["route", "--profiles", h["pack"], CORPUS],
        lambda h: ["route", "--profiles", h["pack"], "--json", CORPUS],
    ],
    "eval": [lambda h: ["eval", h["cases"], "--profiles", h["pack"]]],
    "mode": [lambda h: ["mode", "--profiles", h["pack"]]],
    "corrections": [
        lambda h: ["corrections", "--pack", "hostile"],
        lambda h: ["corrections", "export", "--pack", "hostile"],
        lambda h: ["corrections", "--pack", "hostile", "--json"],
    ],
    "sessions": [
        lambda h: ["sessions"],
        lambda h: ["sessions", "--json"],
        lambda h: ["sessions", "--search", "python", "--text-only"],
        lambda h: ["sessions", "--search", "python", "--text-only", "--json"],
        lambda h: ["sessions", "rename", h["session"], CORPUS],
    ],
    "models": [lambda h: ["models"], lambda h: ["models", "--json"]],
    # the diff quotes the hostile config; port 1: no local server is probed for real
    "init": [lambda h: ["init", "--print", "--ports", "ollama=1,lmstudio=1,llamacpp=1"]],
    "export": [
        lambda h: ["export", h["session"]],
        lambda h: ["export", h["session"], "--format", "json"],
    ],
    "replay": [lambda h: ["replay", h["session"]], lambda h: ["replay", h["session"], "--json"]],
    "chat": [lambda h: [*PIPED_CHAT, "--profiles", h["pack"]]],
    # no outside text: the commands it would run, and the parser's own words
    "setup": [lambda h: ["setup", "local", "--dry-run"]],
    "completion": [lambda h: ["completion", "bash"]],
    # a protocol server on stdio: stdin is closed at once, so it shows only what it logs
    "acp": [lambda h: ["acp", "--classifier", "keyword"]],
}
"""Every verb, with the runs that show outside text (the corpus is in the pack, the session,
the corrections, the config, the eval file, the message and stdin)."""


def test_every_verb_is_fed_the_corpus() -> None:
    from modes_tui.cli.parser import build_parser

    parser = build_parser()
    [verbs] = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    assert set(verbs.choices) == set(VERB_RUNS), "add the new verb to VERB_RUNS"


@pytest.mark.parametrize(
    ("verb", "index"), [(verb, i) for verb, runs in VERB_RUNS.items() for i in range(len(runs))]
)
def test_a_verb_shows_the_corpus_inert(
    verb: str,
    index: int,
    hostile_home: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = VERB_RUNS[verb][index](hostile_home)
    _stdin(monkeypatch, f"hello {CORPUS}\n")
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 1), (argv, out.err)
    assert_inert(out.out + out.err, argv)
    assert "Traceback" not in out.err


def test_markdown_export_to_a_file_is_inert_and_json_keeps_the_value(
    hostile_home: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    target = hostile_home["tmp"] / "out.md"
    assert main(["export", hostile_home["session"], "-o", str(target)]) == 0
    assert_inert(target.read_text(encoding="utf-8"), target)
    assert "[red]x[/]" in target.read_text(encoding="utf-8")
    as_json = hostile_home["tmp"] / "out.json"
    assert main(["export", hostile_home["session"], "--format", "json", "-o", str(as_json)]) == 0
    text = as_json.read_text(encoding="utf-8")
    assert_inert(text, as_json)
    records = json.loads(text)["records"]
    shown = f"python {CORPUS}".replace(SECRET, "[redacted]")
    assert any(r.get("content") == shown for r in records)  # the exact value, but the key


# --------------------------------------------------------------------------- the TUI

WIDGET_CALLS = {"Static", "Label", "notify", "Markdown", "SystemNote", "update", "Collapsible"}


def _our_widget_classes(folder: Path, bases: set[str]) -> set[str]:
    """Our classes that are (through any chain of our own) one of `bases`: a new subclass of
    Static, Markdown or Collapsible is scanned too, whatever it is called."""
    classes = {
        node.name: {_name(base).rsplit(".", 1)[-1] for base in node.bases}
        for path in folder.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    }
    found = set(bases)
    while grown := {name for name, of in classes.items() if of & found} - found:
        found |= grown
    return found


WIDGET_CALLS = _our_widget_classes(REPO / "modes_tui" / "tui", WIDGET_CALLS)
COLLAPSIBLES = _our_widget_classes(REPO / "modes_tui" / "tui", {"Collapsible"})
"""Widgets whose positional arguments are child widgets (checked themselves): their `title`
is the text they show."""
"""Calls that put text on the TUI's screen."""
RENDERS = {"Text", "Text.assemble", "Syntax", "Group", "terminal_safe", "escape", "Content"}
RENDERS |= {"route_card", "tool_summary", "strip_line", "turn_plain_text", "_json"}
RENDERS |= {"self._title", "self._route_text", "self._setting_text", "self._usage_text"}
"""Calls whose result a widget shows without parsing markup, or that made the text safe."""
REVIEWED = {
    # (file, call, argument as written): why it is safe
    ("modes_tui/tui/doubt.py", "Static", "self._others()"): (
        "a Text of mode names and keys from the pack, and one fixed sentence"
    ),
    (
        "modes_tui/tui/doubt.py",
        "Static",
        "self._row('Enter', unsure.pick, unsure.pick_confidence, self._pick_note())",
    ): "DoubtScreen._row: a Text whose mode and note pass terminal_safe",
    (
        "modes_tui/tui/doubt.py",
        "Static",
        "self._row('2', unsure.runner_up, unsure.runner_up_confidence, unsure.roles()[1])",
    ): "DoubtScreen._row: a Text whose mode and note pass terminal_safe",
    ("modes_tui/tui/confirm.py", "Static", "diff_text(self.preview.diff, DIFF_LINES_SHOWN)"): (
        "a Text of a diff core.edits.diffs made terminal-safe"
    ),
    ("modes_tui/tui/panel.py", "update", "policy_text(mode or 'no mode', policy, tools)"): (
        "a Text whose names and globs pass terminal_safe"
    ),
    ("modes_tui/tui/inspector.py", "Static", "reason"): "one of two fixed sentences",
    ("modes_tui/tui/help.py", "Static", "self._text"): "help_text: a Group of Texts",
    ("modes_tui/tui/inspector.py", "Static", "heading"): "'Request' or 'Request, round N'",
    ("modes_tui/tui/inspector.py", "Static", "body"): "request_sections: Text/Group/_json",
    ("modes_tui/tui/inspector.py", "Static", "title"): "the screen's title, a Text",
    ("modes_tui/tui/inspector.py", "Markdown", "record.answer"): "a transcript of safe events",
    ("modes_tui/tui/turn_view.py", "Static", "self._text"): "a NoteBlock's Text",
    ("modes_tui/tui/turn_view.py", "EndingNote", "text"): "a Text built from safe events",
    ("modes_tui/tui/turn_view.py", "AnswerSegment", "segment"): "Markdown of safe events",
    ("modes_tui/tui/turn_view.py", "AnswerSegment", "self.record.answer"): "the same, joined",
    (
        "modes_tui/tui/turn_view.py",
        "AnswerSegment",
        "old.answer or '_(no answer)_'",
    ): "a superseded answer of safe events",
    ("modes_tui/tui/chat.py", "LiteTurn", "r"): "a record; the widget shows turn_plain_text",
    ("modes_tui/tui/chat.py", "LiteTurn", "view.record"): "the same",
    ("modes_tui/tui/arming.py", "Static", "UNARMED_HINT"): "a fixed sentence",
    ("modes_tui/tui/arming.py", "update", "self.answer_hint()"): "fixed sentences",
    ("modes_tui/tui/turn_view.py", "Static", "meta"): "numbers and the mode name, a Text",
    ("modes_tui/tui/turn_view.py", "update", "text"): "a Markdown stream of safe events",
    ("modes_tui/tui/pending.py", "Static", "line"): "a Text of the typed message",
    ("modes_tui/tui/panel.py", "Static", "hint"): "a fixed sentence",
    ("modes_tui/tui/status.py", "update", "line"): "a Text",
    ("modes_tui/tui/status.py", "update", "text"): "a Text",
    ("modes_tui/tui/chat.py", "update", "content"): "the widget's own update, passed through",
    ("modes_tui/tui/turn_runner.py", "notify", "note"): "terminal_safe, markup=False",
    ("modes_tui/tui/conversation.py", "notify", "shown"): "terminal_safe, markup=False",
    ("modes_tui/tui/inspector.py", "Collapsible", "title"): "section names and token counts",
    ("modes_tui/tui/inspector.py", "Static", "f'Tool calls: {len(record.tools)}'"): "a count",
    (
        "modes_tui/tui/replay.py",
        "Static",
        "f'Sessions · {len(self.sessions)} · Enter replays, r resumes, Esc closes'",
    ): "a count",
    ("modes_tui/tui/turn_view.py", "Fold", "old.title"): "two mode names",
    (
        "modes_tui/tui/correct.py",
        "Static",
        "f'Turn {record.number} answered in {self.answered or 'no mode'}: which mode should have answered?'",
    ): "a mode name ([a-z0-9_-])",
}


def widget_calls(path: Path) -> set[tuple[str, str, str]]:
    """(file, call, first argument) of every widget call in `path` whose argument is neither
    a literal nor one of `RENDERS`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    relative = str(path.relative_to(REPO))
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _name(node.func).rsplit(".", 1)[-1]
        if called not in WIDGET_CALLS:
            continue
        if called in COLLAPSIBLES:  # its children are widgets (checked themselves)
            titles = [k.value for k in node.keywords if k.arg == "title"]
            if not titles:
                continue
            first = titles[0]
        elif node.args:
            first = node.args[0]
        else:
            continue
        if isinstance(first, ast.Constant) or (
            isinstance(first, ast.Call) and _name(first.func) in RENDERS
        ):
            continue
        found.add((relative, called, ast.unparse(first).replace('"', "'")))
    return found


def test_the_tui_puts_outside_text_in_widgets_only_as_text() -> None:
    found = set().union(*(widget_calls(p) for p in (REPO / "modes_tui" / "tui").glob("*.py")))
    assert found - set(REVIEWED) == set(), "wrap the text in Text(...) or review it here"
    assert set(REVIEWED) - found == set(), "a reviewed call is gone: remove it from REVIEWED"


async def test_the_confirmation_dialog_shows_a_hostile_mcp_description_inert() -> None:
    from textual.app import App
    from textual.widgets import Static

    from modes_tui.core.redaction import remember_environment
    from modes_tui.tui.confirm import ConfirmToolScreen

    remember_environment({"OPENAI_API_KEY": SECRET})
    screen = ConfirmToolScreen(ToolCall("c1", "docs_search", {"q": "x"}), description=CORPUS)
    async with App[None]().run_test(size=(120, 40)) as pilot:
        pilot.app.push_screen(screen)
        await pilot.pause(0.1)
        shown = "".join(str(w.render()) for w in screen.query(Static))
        frame = pilot.app.screen._compositor.render_full_update().render_segments(pilot.app.console)
    assert_inert(shown, "dialog text")
    assert "[red]x[/]" in shown  # the markup is shown, not applied
    for sequence in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\x1bP", "\u202e", SECRET, "pwned"):
        assert sequence not in frame, repr(sequence)


def test_a_search_snippet_is_cut_from_safe_text(capsys: pytest.CaptureFixture[str]) -> None:
    log = SessionLog.create(app_dirs(), pack="default", model="m")
    link = "\x1b]8;;http://evil.example/page\x1b\\here\x1b]8;;\x1b\\"
    log.record("user", 1, content=f"find the {link} and more words after it")
    log.close()
    assert main(["sessions", "--search", "find", "--text-only"]) == 0
    out = capsys.readouterr().out
    assert_inert(out, "search snippet")
    assert "http" not in out and "8;;" not in out  # no residue of a sequence cut in two
    assert "find the here and more" in out


async def test_the_tui_shows_a_hostile_turn_inert() -> None:
    from modes_tui.core.history.events import ReasoningDelta, ToolCallFinished, ToolCallRequested
    from modes_tui.core.redaction import remember_environment
    from modes_tui.tui.app import build_app
    from modes_tui.tui.turn_view import AnswerSegment
    from tests.support.tui_support import ScriptEngine, answer_events, services, started, until

    remember_environment({"OPENAI_API_KEY": SECRET})
    call = ToolCall("call_1", "read_file", {"path": CORPUS})
    events = answer_events(f"answer {CORPUS}", "chat", "hi", chunk=5)
    events[2:2] = [ReasoningDelta(CORPUS[i : i + 7]) for i in range(0, len(CORPUS), 7)]
    events[-1:-1] = [ToolCallRequested(call), ToolCallFinished(call, "ok", CORPUS)]
    engine = ScriptEngine().script(events)
    async with build_app(services(engine)).run_test(size=(140, 60)) as pilot:
        app = await started(pilot)
        app.conversation.prompt.value = "hi"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(
            pilot,
            lambda: (
                bool(app.conversation.records) and app.conversation.records[-1].status == "finished"
            ),
        )  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        source = app.query_one(AnswerSegment).source
        frame = app.screen._compositor.render_full_update().render_segments(app.console)
    assert_inert(source, "answer source")
    assert "[red]x[/]" in source  # Markdown shows it as text
    for sequence in ("\x1b]", "\x1b[2J", "\x07", "\x08", "\x9b", "\x1bP", "\u202e", "\u2066"):
        assert sequence not in frame, repr(sequence)
    assert SECRET not in frame and "pwned" not in frame and "[red]x[/]" in frame


def test_the_app_s_markdown_exports_are_inert(hostile_home: dict[str, Any]) -> None:
    from modes_tui.core.history.transcript import fold_turn
    from modes_tui.core.redaction import remember_environment
    from modes_tui.store.export import conversation_markdown, session_markdown
    from modes_tui.store.replay import replay
    from modes_tui.store.session_reader import load_session
    from modes_tui.tui.sessions import StoreSessions

    remember_environment({"OPENAI_API_KEY": SECRET})
    replayed = replay(load_session(hostile_home["session"]))
    assert_inert(session_markdown(replayed), "session_markdown")
    turns = [fold_turn(t.turn, t.user or "", t.events) for t in replayed.turns]
    assert_inert(conversation_markdown(turns), "conversation_markdown (the TUI's /export)")
    catalog = StoreSessions(app_dirs(), router=lambda: None, export_dir=hostile_home["tmp"])  # type: ignore[arg-type,return-value]
    written = catalog.export(hostile_home["session"])  # the TUI's /export of a recorded session
    assert_inert(written.read_text(encoding="utf-8"), written)
