"""One slash-command table for the app and the REPL: what each lists, accepts and completes."""

from __future__ import annotations

import io

import pytest
from prompt_toolkit.document import Document

from modes_tui.frontend.commands import (
    COMMAND_NAMES,
    COMMANDS,
    CommandError,
    commands_for,
    did_you_mean,
    find_command,
    mode_settings,
)
from modes_tui.frontend.lines import read_line
from modes_tui.llm.fake import ScriptedModel
from modes_tui.repl import Printer, run_line, slash_completer
from tests.repl.test_repl import context_for, engine_with

APP_ONLY = {"/sessions", "/replay", "/export", "/copy"}


def test_every_command_is_listed_once_and_offered_somewhere() -> None:
    names = [spec.name for spec in COMMANDS]
    assert len(names) == len(set(names))
    assert all(spec.where and spec.usage.startswith(spec.name) for spec in COMMANDS)
    assert set(COMMAND_NAMES) == set(names)
    assert {s.name for s in commands_for("repl")} == set(names) - APP_ONLY


async def test_the_repl_help_lists_its_commands_from_the_table() -> None:
    out = io.StringIO()
    assert await run_line("/help", context_for(engine_with(ScriptedModel())), Printer(out))
    shown = out.getvalue()
    for spec in commands_for("repl"):
        assert f"{spec.usage:<20} {spec.help_for('repl')}" in shown
    assert (
        "print why the last turn went where it did, and the request it sent" in shown
    )  # the REPL's own words
    assert not any(name in shown for name in APP_ONLY)


@pytest.mark.parametrize("line", ["/export", "/sessions", "/copy"])
async def test_the_repl_refuses_app_only_commands_by_name(line: str) -> None:
    out = io.StringIO()
    assert await run_line(line, context_for(engine_with(ScriptedModel())), Printer(out))
    assert out.getvalue() == f"unknown command {line}; /help lists the commands\n"


@pytest.mark.parametrize("line", ["/quit", "/exit"])
async def test_quit_and_its_alias_leave_the_repl(line: str) -> None:
    out = io.StringIO()
    assert not await run_line(line, context_for(engine_with(ScriptedModel())), Printer(out))


def test_the_app_parser_takes_the_alias_as_the_command_it_names() -> None:
    settings = mode_settings(["chat", "code"])
    assert read_line("/exit", settings).name == "/quit"
    with pytest.raises(CommandError, match="takes no argument"):
        read_line("/exit now", settings)
    assert find_command("/export", "repl") is None and find_command("/export", "app")


def test_repl_completion_offers_the_table_with_repl_help() -> None:
    completer = slash_completer(context_for(engine_with(ScriptedModel())))
    found = {c.text: c.display_meta_text for c in completer.get_completions(Document("/w"), None)}
    assert found == {
        "/why": "print why the last turn went where it did, and the request it sent",
        "/wrong": ("wrong mode: answer the last turn again in MODE; undo forgets it"),
        "/write": "answer this one message in write",  # a one-shot, after the commands
    }


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("/mdoe", ["/mode"]),
        ("/MDOE", ["/mode"]),
        ("/hlep", ["/help"]),
        ("/clera", ["/clear"]),
        ("/wrnog", ["/wrong"]),
        ("/sesions", ["/sessions"]),
        ("/ses", ["/sessions"]),
        ("/cdoe", ["/code"]),  # a mode's one-shot, mistyped
        ("/frobnicate", []),
        ("/mode", []),  # a command is not a typo
        ("/exit", []),  # nor an alias
        ("/code", []),  # nor a mode: `/code text` is a one-shot turn in that mode
        ("/", []),
    ],
)
def test_did_you_mean_names_the_close_commands_and_never_a_mode(
    typed: str, meant: list[str]
) -> None:
    assert did_you_mean(typed, "app", ["chat", "code"]) == meant


def test_did_you_mean_offers_only_commands_of_the_surface() -> None:
    assert did_you_mean("/sesions", "app") == ["/sessions"]
    assert did_you_mean("/sesions", "repl") == []  # the REPL has no /sessions


def test_the_app_parser_says_did_you_mean() -> None:
    with pytest.raises(CommandError) as raised:
        read_line("/mdoe code", mode_settings(["chat", "code"]))
    assert (
        str(raised.value) == "unknown command /mdoe; did you mean /mode? /help lists the commands"
    )


async def test_the_repl_says_did_you_mean_from_the_same_table() -> None:
    out = io.StringIO()
    assert await run_line("/mdoe code", context_for(engine_with(ScriptedModel())), Printer(out))
    assert out.getvalue() == "unknown command /mdoe; did you mean /mode? /help lists the commands\n"


@pytest.mark.parametrize("line", ["/clear now", "/why please", "/quit now"])
async def test_the_repl_checks_arguments_with_the_apps_check(line: str) -> None:
    engine = engine_with(ScriptedModel())
    out = io.StringIO()
    assert await run_line(line, context_for(engine), Printer(out))  # still running
    name, _, argument = line.partition(" ")
    assert out.getvalue() == f"error: {name} takes no argument (got {argument!r})\n"
    with pytest.raises(CommandError, match=f"{name} takes no argument"):
        read_line(line, ["chat", "code"], "app")
