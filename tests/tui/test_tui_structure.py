"""The app's shape (issue 32): the App wires start-up, screens and global keys and stays small;
the conversation is a screen of its own; no two modules of `tui/` import each other (type-only
imports count here: a protocol replaces the back reference); each key is bound once; a typed
line is read once, when Enter is pressed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from datetime import UTC

import pytest
from textual.binding import Binding

import modes_tui.frontend.lines as lines_module
from modes_tui.frontend.lines import Read, read_line
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.conversation import ConversationScreen
from tests.support.tui_support import ScriptEngine, answer_events, services, until
from tests.test_architecture import MODULES, cycles, imports_of
from tests.tui.test_tui_app import idle, ready, send

APP_METHODS = 40
"""The most methods `ModesApp` may define, with every modes_tui class it inherits from."""
SIZE = (120, 40)


def own_methods(cls: type) -> list[str]:
    """Functions and properties defined by `cls` and the modes_tui classes it inherits."""
    names: list[str] = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("modes_tui"):
            continue
        for name, value in vars(klass).items():
            if inspect.isfunction(value) or isinstance(value, property | classmethod):
                names.append(f"{klass.__name__}.{name}")
            elif hasattr(value, "__wrapped__") or type(value).__name__ == "DecoratedMethod":
                names.append(f"{klass.__name__}.{name}")  # a @work method
    return names


def test_the_app_class_keeps_to_start_up_screens_and_global_keys() -> None:
    methods = own_methods(ModesApp)
    assert len(methods) <= APP_METHODS, f"{len(methods)} methods: {methods}"
    # what a turn or a command is stays out of the App
    for gone in ("ask", "records", "send_line", "run_command", "help_text", "action_retry"):
        assert not hasattr(ModesApp, gone), gone


def test_the_method_count_sees_workers_properties_and_handlers() -> None:
    methods = own_methods(ModesApp)
    for expected in ("build_engine", "services", "_engine_built", "on_mount"):
        assert f"ModesApp.{expected}" in methods, expected


MODULE_LINES = 500
"""The most lines a module of `tui/` may have (split along a concept when one grows)."""


def test_every_tui_module_keeps_under_the_line_limit() -> None:
    long = {
        name: lines
        for name, path in MODULES.items()
        if name.startswith("modes_tui.tui")
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert long == {}


def test_no_import_cycle_inside_tui_even_through_type_only_imports() -> None:
    tui = {name for name in MODULES if name.startswith("modes_tui.tui.")}
    graph = {
        name: {item.target for item in imports_of(name) if item.target in tui} - {name}
        for name in tui
    }
    assert cycles(graph) == set()


def test_the_cycle_check_finds_a_type_only_cycle() -> None:
    graph = {"modes_tui.tui.a": {"modes_tui.tui.b"}, "modes_tui.tui.b": {"modes_tui.tui.a"}}
    assert cycles(graph) == {frozenset(graph)}


def test_no_tui_module_imports_the_command_line() -> None:
    tui = [name for name in MODULES if name.startswith("modes_tui.tui")]
    upward = [
        (name, item.target, item.line)
        for name in tui
        for item in imports_of(name)
        if item.target.startswith("modes_tui.cli")
    ]
    assert upward == []


# Esc is the one key with two bindings in one place, on purpose: it cancels the running turn
# when there is one (shown as "esc Cancel"), else it takes the keys back to the prompt (not
# shown); `check_action` decides, in that order.
TWO_ACTIONS = {"escape": ["cancel_turn", "focus_prompt"]}


def test_each_key_is_bound_once_across_the_app_and_the_conversation() -> None:
    app = ModesApp(services())
    mode_keys = [
        Binding(mk.key, f"set_setting({mk.mode!r})", id=mk.binding_id)
        for mk in app.mode_keys
        if mk.key
    ]
    assert mode_keys  # the demo pack has keys for its modes
    places = {
        "app": [*ModesApp.BINDINGS, *mode_keys],
        "conversation": list(ConversationScreen.BINDINGS),
    }
    by_key: dict[str, list[tuple[str, str]]] = {}
    ids: Counter[str] = Counter()
    for place, bindings in places.items():
        for binding in bindings:
            assert isinstance(binding, Binding)
            for key in binding.key.split(","):
                by_key.setdefault(key.strip(), []).append((place, binding.action))
            assert binding.id, f"{binding.key} has no id: it cannot be rebound in keymap:"
            ids[binding.id] += 1
    repeated = {key: [action for _, action in v] for key, v in by_key.items() if len(v) > 1}
    assert repeated == TWO_ACTIONS
    assert [place for place, _ in by_key["escape"]] == ["conversation", "conversation"]
    assert [i for i, n in ids.items() if n > 1] == []
    assert by_key["ctrl+n"] == [("conversation", "accept_hand_off")]


async def test_a_line_is_read_once_even_when_it_waits_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[str] = []

    def counted(line: str, modes: list[str], surface: str = "app") -> Read:
        reads.append(line)
        return read_line(line, modes, "app")

    # the screen imports `read_line` when the first line is typed (not before the first frame)
    monkeypatch.setattr(lines_module, "read_line", counted)
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(
        answer_events("slow answer", "chat", "first", chunk=4),
        answer_events("b", "code", "second"),
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "first")
        await until(pilot, lambda: app.conversation.turns.running)
        await send(pilot, "/code second")
        await until(pilot, lambda: len(app.conversation.pending) == 1)
        for _ in range(20):
            steps.release()
        await until(pilot, lambda: len(engine.texts) == 2 and idle(app)())
    assert reads == ["first", "/code second"]
    assert engine.texts == ["first", "second"]
    assert app.conversation.records[-1].number == 2


def test_the_conversation_is_the_first_screen() -> None:
    app = ModesApp(services())
    assert isinstance(app.get_default_screen(), ConversationScreen)
    assert app.get_default_screen() is app.conversation


def test_the_keymap_check_knows_every_binding_id_of_the_app() -> None:
    # `keymap:` entries are checked against this list: a binding added without it would be
    # reported as "no action", one removed would pass the check and do nothing
    import importlib
    import inspect
    import pkgutil

    import modes_tui.tui
    from modes_tui.tui.keymap_check import BINDING_IDS

    found: set[str] = set()
    for module_info in pkgutil.iter_modules(modes_tui.tui.__path__):
        module = importlib.import_module(f"modes_tui.tui.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            for binding in vars(cls).get("BINDINGS", []):
                if isinstance(binding, Binding) and binding.id:
                    found.add(binding.id)
    assert found == set(BINDING_IDS)
