"""The bad-input matrix: one row per case, each run as the user would run it.

Every row checks the same promises: the documented exit code (README, "Command line"), a
message that names what was wrong and where, no traceback, no Python object repr, and
nothing the user typed lost (their messages are in the session). Rows run the real CLI in
a subprocess with MODES_TUI_HOME in a temp folder; the provider rows that need no process
boundary (a hanging server, a 401) drive the engine in process against the same fake
OpenAI-compatible server on 127.0.0.1 (tests/support/fake_openai_server.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai_server import (
    AUTH_ERROR,
    SERVER_ERROR,
    closed_port,
    fake_openai_server,
)

REPO = Path(__file__).resolve().parent.parent
OK, FAILURE, USAGE = 0, 1, 2
ECHO = ["--model", "scripted/echo", "chat", "--plain", "--classifier", "keyword"]
ROUTE = ["route", "my program segfaults", "--classifier", "keyword"]

Setup = Callable[[Path], dict[str, Any]]
"""Prepares the home folder; returns extra settings for the run (args, env)."""


@dataclass(frozen=True)
class Row:
    """One bad input: what to run, and what the user must see."""

    args: list[str]
    """The command line after `modes-tui` ({home} and {tmp} are filled in)."""
    code: int
    """The documented exit code."""
    says: tuple[str, ...] = ()
    """Fragments the output (stderr + stdout) must hold: what is wrong, and where."""
    stdin: bytes = b""
    """What is piped in."""
    setup: Setup | None = None
    """Prepares files before the run."""
    typed: tuple[str, ...] = ()
    """Messages that must be in the session afterwards, exactly."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment."""


def write(relative: str, data: bytes | str) -> Setup:
    def setup(home: Path) -> dict[str, Any]:
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return {}

    return setup


def both(*steps: Setup) -> Setup:
    def setup(home: Path) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        for step in steps:
            extra.update(step(home))
        return extra

    return setup


def folder(relative: str) -> Setup:
    def setup(home: Path) -> dict[str, Any]:
        (home / relative).mkdir(parents=True, exist_ok=True)
        return {}

    return setup


def symlink(relative: str, target: str) -> Setup:
    def setup(home: Path) -> dict[str, Any]:
        link = home / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(home / target)
        return {}

    return setup


BINARY = bytes(range(256)) * 8  # NULs, C0, C1, invalid UTF-8
PACK = "pk"
GOOD_PACK = both(
    write(f"{PACK}/router.yaml", "classifier: keyword\nfallback: chat\n"),
    write(f"{PACK}/chat.yaml", "description: Everyday chat.\nkeywords: [hello]\n"),
)
PACK_ROUTE = ["route", "hello", "--profiles", "{home}/" + PACK]
SESSION = "data/sessions/20260314-092653-abcd.jsonl"


def session_lines() -> list[dict[str, Any]]:
    """A three-turn session as the app writes it (meta, then user/route/assistant)."""
    lines: list[dict[str, Any]] = [
        {"v": 1, "type": "meta", "at": "2026-03-14T09:26:53.000+00:00", "turn": 0,
         "id": "20260314-092653-abcd", "created": "2026-03-14T09:26:53.000+00:00",
         "pack": "default", "cwd": "/w", "app_version": "0.1.0", "model": "scripted/echo",
         "title": "one"},
    ]  # fmt: skip
    for turn, text in enumerate(["one", "two", "three"], 1):
        at = f"2026-03-14T09:2{turn}:00.000+00:00"
        lines += [
            {"v": 1, "type": "user", "at": at, "turn": turn, "content": text},
            {"v": 1, "type": "route", "at": at, "turn": turn, "setting": "auto", "warnings": [],
             "route": {"mode_name": "chat", "decided_by": "fallback", "reason": "No mode chosen"}},
            {"v": 1, "type": "assistant", "at": at, "turn": turn, "usage": None,
             "message": {"role": "assistant", "content": f"answer {text}", "mode": "chat"}},
        ]  # fmt: skip
    return lines


def session_bytes(change: Callable[[list[str]], list[str]] = lambda lines: lines) -> bytes:
    lines = [json.dumps(line) for line in session_lines()]
    return ("\n".join(change(lines)) + "\n").encode()


def corrupt_middle(lines: list[str]) -> list[str]:
    lines[5] = '{"v": 1, "type": "assist'
    return lines


def newer_version(lines: list[str]) -> list[str]:
    return [line.replace('"v": 1', '"v": 99') if '"assistant"' in line else line for line in lines]


def provider(model: str, port: Callable[[str], str] | None = None) -> Setup:
    """Point the openai provider at the fake server (the URL is filled in at run time)."""

    def setup(home: Path) -> dict[str, Any]:
        return {"provider_model": model, "port": port}

    return setup


ROWS: dict[str, Row] = {
    # ---------------------------------------------------------------- packs
    "pack/broken-yaml": Row(
        PACK_ROUTE,
        FAILURE,
        ("pk/chat.yaml", "line 2", "not valid YAML"),
        setup=both(GOOD_PACK, write(f"{PACK}/chat.yaml", "description: [unclosed\n")),
    ),
    "pack/huge-file": Row(
        PACK_ROUTE,
        FAILURE,
        ("pk/chat.yaml", "2.0 MB", "at most 1 MB"),
        setup=both(GOOD_PACK, write(f"{PACK}/chat.yaml", "examples:\n" + "  - x\n" * 349_526)),
    ),
    "pack/binary-profile": Row(
        PACK_ROUTE,
        FAILURE,
        ("pk/chat.yaml", "binary file"),
        setup=both(GOOD_PACK, write(f"{PACK}/chat.yaml", BINARY)),
    ),
    "pack/binary-template": Row(
        PACK_ROUTE,
        FAILURE,
        ("pk/prompts/chat/instructions.md", "not UTF-8"),
        setup=both(GOOD_PACK, write(f"{PACK}/prompts/chat/instructions.md", b"caf\xe9 \xff")),
    ),
    "pack/no-such-folder": Row(
        ["route", "hello", "--profiles", "{home}/nowhere"], FAILURE, ("nowhere", "no such folder")
    ),
    "pack/empty-folder": Row(
        PACK_ROUTE, FAILURE, ("pk/router.yaml", "missing", "no profiles"), setup=folder(PACK)
    ),
    # ---------------------------------------------------------------- config.yaml
    "config/garbage": Row(
        ROUTE, FAILURE, ("config.yaml", "not valid YAML"), setup=write("config/config.yaml", "{{{")
    ),
    "config/unknown-key": Row(
        ROUTE,
        FAILURE,
        ("config.yaml", "unknown key 'bogus'"),
        setup=write("config/config.yaml", "bogus: 1\n"),
    ),
    "config/wrong-type": Row(
        ROUTE,
        FAILURE,
        ("config.yaml", "sessions_fsync must be true or false"),
        setup=write("config/config.yaml", "sessions_fsync: maybe\n"),
    ),
    "config/binary": Row(
        ROUTE, FAILURE, ("config.yaml", "cannot be read"), setup=write("config/config.yaml", BINARY)
    ),
    "config/directory": Row(
        ROUTE,
        FAILURE,
        ("config.yaml", "is a folder, not a regular file", "move the folder away"),
        setup=folder("config/config.yaml"),
    ),
    # ---------------------------------------------------------------- state.json
    # a broken control file never stops a turn: auto routing, and a warning naming the file
    "state/garbage": Row(
        ECHO,
        OK,
        ("state.json", "not valid JSON", "You said: hi"),
        stdin=b"hi\n",
        setup=write("config/state.json", '{"mode": '),
        typed=("hi",),
    ),
    "state/binary": Row(
        ECHO,
        OK,
        ("state.json", "not UTF-8", "You said: hi"),
        stdin=b"hi\n",
        setup=write("config/state.json", BINARY),
        typed=("hi",),
    ),
    "state/directory": Row(
        ECHO,
        OK,
        ("state.json", "is a folder, not a regular file", "You said: hi"),
        stdin=b"hi\n",
        setup=folder("config/state.json"),
        typed=("hi",),
    ),
    "state/unreadable-symlink-loop": Row(
        ECHO,
        OK,
        # links are never followed (issue 20): a loop is a link like any other
        ("state.json", "is a symlink (to ", "not a regular file", "You said: hi"),
        stdin=b"hi\n",
        setup=symlink("config/state.json", "config/state.json"),
        typed=("hi",),
    ),
    "state/symlink-to-a-file": Row(
        ["mode"],
        OK,
        # refused, not followed: writing through such a link replaced the file it named
        ("mode: auto", "state.json: is a symlink (to ", "dotfiles/state.json", "Remove it"),
        setup=both(
            write("dotfiles/state.json", '{"mode": "code"}'),
            symlink("config/state.json", "dotfiles/state.json"),
        ),
    ),
    "state/unknown-mode": Row(
        ECHO,
        OK,
        ("state.json", "'nosuch' is not in the active pack", "You said: hi"),
        stdin=b"hi\n",
        setup=write("config/state.json", '{"mode": "nosuch"}'),
        typed=("hi",),
    ),
    # ---------------------------------------------------------------- session files
    "session/corrupt-middle-line": Row(
        ["replay", "latest"],
        OK,
        (f"{SESSION}:6: corrupt line skipped", "one", "three", "answer three"),
        setup=write(SESSION, session_bytes(corrupt_middle)),
    ),
    "session/unknown-version": Row(
        ["replay", "latest"],
        OK,
        ("newer modes-tui (schema version 99", "upgrade modes-tui", "two"),
        setup=write(SESSION, session_bytes(newer_version)),
    ),
    "session/empty": Row(
        ["replay", "latest"],
        OK,
        (SESSION, "empty: the session was started but nothing was recorded"),
        setup=write(SESSION, b""),
    ),
    "session/empty-listed": Row(
        ["sessions"], OK, ("20260314-092653-abcd", "empty"), setup=write(SESSION, b"")
    ),
    "session/binary": Row(
        ["export", "latest"],
        OK,
        (f"{SESSION}:1:", "more problem(s) like these"),
        setup=write(SESSION, BINARY * 8),
    ),
    "session/binary-listed": Row(
        ["sessions"],
        OK,
        ("20260314-092653-abcd", "the first line is not a meta record"),
        setup=write(SESSION, BINARY),
    ),
    "session/directory": Row(
        ["replay", "20260314-092653-abcd"],
        FAILURE,
        ("cannot read session file", SESSION, "is a folder"),
        setup=folder(SESSION),
    ),
    "session/unknown-id": Row(
        ["replay", "nosuch"], FAILURE, ("no session 'nosuch'", "modes-tui sessions")
    ),
    # ---------------------------------------------------------------- eval files
    "eval/bad-json-line": Row(
        ["eval", "{home}/e.jsonl", "--classifier", "keyword"],
        FAILURE,
        ("e.jsonl:2", "not valid JSON"),
        setup=write("e.jsonl", '{"text": "hi", "mode": "chat"}\n{oops\n'),
    ),
    "eval/binary": Row(
        ["eval", "{home}/e.jsonl", "--classifier", "keyword"],
        FAILURE,
        ("e.jsonl", "cannot read"),
        setup=write("e.jsonl", BINARY),
    ),
    "eval/empty": Row(
        ["eval", "{home}/e.jsonl", "--classifier", "keyword"],
        FAILURE,
        ("e.jsonl", "no cases"),
        setup=write("e.jsonl", ""),
    ),
    "eval/unknown-mode-and-shapes": Row(
        ["eval", "{home}/e.jsonl", "--classifier", "keyword"],
        FAILURE,
        ("e.jsonl:1", "'nosuch' is not a mode", "e.jsonl:2", "e.jsonl:3", "must be a JSON object"),
        setup=write("e.jsonl", '{"text": "x", "mode": "nosuch"}\n{"mode": "chat"}\n[1]\n'),
    ),
    "eval/missing": Row(
        ["eval", "{home}/none.jsonl", "--classifier", "keyword"],
        FAILURE,
        ("none.jsonl", "no such file"),
    ),
    # ---------------------------------------------------------------- command-line input
    "args/nul-bytes-on-stdin": Row(
        ECHO,
        OK,
        ("stdin line 1 holds 1 NUL byte(s)", "You said: hello world"),
        stdin=b"hello\x00 world\n",
        typed=("hello world",),
    ),
    "args/invalid-utf8-on-stdin": Row(
        ECHO,
        OK,
        ("stdin line 2 is not valid UTF-8 (byte 0xe9", "You said: first"),
        stdin=b"first\ncaf\xe9 au lait\n",
        typed=("first", "caf\ufffd au lait"),
        env={"PYTHONIOENCODING": "utf-8:strict"},
    ),
    "args/invalid-utf8-routed": Row(
        ["route", "-", "--classifier", "keyword"],
        OK,
        ("stdin is not valid UTF-8", "chat"),
        stdin=b"caf\xe9",
    ),
    "args/huge-message": Row(
        ECHO, OK, ("You said: xxxx",), stdin=b"x" * 1_000_000 + b"\n", typed=("x" * 1_000_000,)
    ),
    "args/huge-argument": Row(["route", "y" * 100_000, "--classifier", "keyword"], OK, ("chat",)),
    "args/unknown-option": Row(
        ["chat", "--plain", "--bogus"], USAGE, ("unrecognized arguments: --bogus",)
    ),
    "args/unknown-verb": Row(["frobnicate"], USAGE, ("invalid choice: 'frobnicate'",)),
    "args/unknown-mode": Row(["mode", "nosuch"], FAILURE, ("unknown mode 'nosuch'", "chat")),
    "args/empty-message": Row(["route", "   "], FAILURE, ("nothing to route",)),
    # ---------------------------------------------------------------- providers
    "provider/unknown-provider": Row(
        ["--model", "nosuchprovider-xyz/model", "chat", "--plain", "--classifier", "keyword"],
        FAILURE,
        ("error: not found (nosuchprovider-xyz/model)", "hint: check the model id"),
        stdin=b"hello there\n",
        typed=("hello there",),
    ),
    "provider/closed-port": Row(
        ["chat", "--plain", "--classifier", "keyword"],
        FAILURE,
        (
            "error: connection (openai/ok): Connection error. (Cannot connect to host 127.0.0.1:",
            "hint: the connection to the provider failed",
        ),
        stdin=b"hello there\n",
        setup=provider("ok", port=lambda base: f"http://127.0.0.1:{closed_port()}/v1"),
        typed=("hello there",),
    ),
    "provider/http-500": Row(
        ["chat", "--plain", "--classifier", "keyword"],
        FAILURE,
        (f"error: server error (openai/http-500): {SERVER_ERROR}", "hint: the provider failed"),
        stdin=b"hello there\n",
        setup=provider("http-500"),
        typed=("hello there",),
    ),
    "provider/closed-mid-stream": Row(
        ["chat", "--plain", "--classifier", "keyword"],
        FAILURE,
        ("The first half of an answer", "error: connection (openai/cut)"),
        stdin=b"hello there\n",
        setup=provider("cut"),
        typed=("hello there",),
    ),
}


def run_row(row: Row, home: Path, base_url: str | None = None) -> tuple[int, str, str]:
    extra = row.setup(home) if row.setup is not None else {}
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(REPO), **row.env}
    args = [arg.replace("{home}", str(home)) for arg in row.args]
    if "provider_model" in extra:
        assert base_url is not None
        port = extra["port"]
        env["OPENAI_API_BASE"] = port(base_url) if port else base_url
        env["OPENAI_API_KEY"] = "sk-test"
        args = ["--model", f"openai/{extra['provider_model']}", *args]
    done = subprocess.run(
        [sys.executable, "-m", "modes_tui", *args],
        input=row.stdin,
        capture_output=True,
        env=env,
        cwd=home,
        timeout=180,
    )
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode()


def typed_in_sessions(home: Path) -> list[str]:
    found = []
    for log in sorted((home / "data" / "sessions").glob("*.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["type"] == "user":
                found.append(record["content"])
    return found


@pytest.fixture(scope="module")
def server() -> Any:
    with fake_openai_server() as base:
        yield base


@pytest.mark.parametrize("name", list(ROWS))
def test_bad_input(name: str, tmp_path: Path, server: str) -> None:
    row = ROWS[name]
    home = tmp_path / "home dir"  # a path with a space, as on many machines
    home.mkdir()
    code, out, err = run_row(row, home, server)
    shown = err + out
    assert code == row.code, f"exit {code}, expected {row.code}\n{shown[-2000:]}"
    for fragment in row.says:
        assert fragment in shown, f"missing {fragment!r} in:\n{shown[-2000:]}"
    assert "Traceback" not in shown
    assert " object at 0x" not in shown  # no Python object repr reaches the user
    if row.typed:
        assert typed_in_sessions(home) == list(row.typed)


def test_the_matrix_covers_every_category_the_issue_names() -> None:
    categories: dict[str, int] = {}
    for name in ROWS:
        category = name.split("/")[0]
        categories[category] = categories.get(category, 0) + 1
    assert set(categories) == {"pack", "config", "state", "session", "eval", "args", "provider"}
    assert all(count >= 4 for count in categories.values()), categories


# --------------------------------------------------------------------------- in process


async def provider_turn(base_url: str, model: str, *, timeout: float = 30.0) -> tuple[Any, ...]:
    """One engine turn against the fake server; returns (events, engine, session records)."""
    from modes_tui.llm.litellm_model import LiteLLMChatModel
    from modes_tui.runtime import build_engine, load_pack
    from tests.support.engine_support import engine_config

    records: list[dict[str, Any]] = []

    class Records:
        def record(self, type: str, turn: int, **fields: Any) -> None:
            records.append({"type": type, **fields})

    engine = build_engine(
        engine_config(model_override=f"openai/{model}"),
        pack=load_pack("default"),
        classifier="keyword",
        model=LiteLLMChatModel(timeout=timeout),
        session=Records(),
    )
    events = [event async for event in engine.run_turn("hello there")]
    return events, engine, records


@pytest.fixture
def openai_env(server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_BASE", server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return server


@pytest.mark.parametrize(
    ("model", "kind", "says", "retryable"),
    [
        ("hang", "timeout", "Request timed out", True),
        ("bad-sse", "bad_stream", "Expecting property name", True),
        ("http-401", "auth", AUTH_ERROR, False),
        ("http-500", "server_error", SERVER_ERROR, True),
        ("cut", "connection", "Connection error. (", True),
    ],
)
async def test_a_provider_failure_fails_the_turn_and_keeps_the_message(
    openai_env: str, model: str, kind: str, says: str, retryable: bool
) -> None:
    from modes_tui.core.history.events import TurnFailed

    # a short timeout only where it is what fails: a loaded machine must not turn the
    # other failures into timeouts
    timeout = 1.0 if kind == "timeout" else 30.0
    events, engine, records = await provider_turn(openai_env, model, timeout=timeout)
    failed = events[-1]
    assert isinstance(failed, TurnFailed), events
    assert failed.kind == kind and failed.retryable is retryable
    assert says in failed.error and failed.hint
    assert "object at 0x" not in failed.error and "Traceback" not in failed.error
    assert engine.conversation.messages[0].content == "hello there"  # nothing typed is lost
    assert [r["content"] for r in records if r["type"] == "user"] == ["hello there"]
    assert records[-1]["type"] == "assistant" and records[-1]["error"] == failed.error
    if model == "cut":
        assert failed.partial == "The first half of an answer"
        assert records[-1]["message"]["content"] == failed.partial


def test_object_reprs_never_reach_a_provider_error() -> None:
    from modes_tui.core.errors import ProviderError

    error = ProviderError(
        "connection",
        "Cannot connect to host api.example.com:443 ssl:<ssl.SSLContext object at 0x7f3a2c1b9e40> "
        "[Connect call failed] via <function retry at 0xdeadbeef>",
    )
    assert error.provider_message == (
        "Cannot connect to host api.example.com:443 [Connect call failed] via"
    )
    assert "0x" not in str(error)


def test_writing_a_symlinked_control_file_is_refused_and_leaves_link_and_target(
    tmp_path: Path,
) -> None:
    from modes_tui.core.errors import ModesError
    from modes_tui.store.control import ControlFile

    target = tmp_path / "dotfiles" / "state.json"
    target.parent.mkdir()
    target.write_text('{"mode": "code"}')
    link = tmp_path / "config" / "state.json"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(ModesError, match=r"state\.json: it is a symlink"):
        ControlFile(link).write("auto")
    assert link.is_symlink() and json.loads(target.read_text()) == {"mode": "code"}

    loop = tmp_path / "config" / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(ModesError, match=r"loop\.json: it is a symlink"):
        ControlFile(loop).write("auto")
    assert loop.is_symlink()


def test_a_folder_named_as_a_file_is_refused_without_advice_to_delete_it(tmp_path: Path) -> None:
    # `eval /tmp` used to say "/tmp is a folder, not a regular file: remove it"
    from modes_tui.core.files import FileReadError, read_text

    with pytest.raises(FileReadError) as caught:
        read_text(tmp_path, "session")
    message = str(caught.value)
    assert f"{tmp_path} is a folder, not a regular file: name a file" in message
    assert "remove" not in message.lower()
