"""`modes-tui chat` (and `modes-tui` alone): the terminal UI, or `--plain` the REPL and pipes."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Awaitable, Coroutine
from functools import partial
from typing import TYPE_CHECKING

from modes_tui.cli.common import EXIT_OK, say_err, settings_for

if TYPE_CHECKING:
    import argparse

    from modes_tui.core.engine.ports import Confirmer
    from modes_tui.mcp.servers import McpServers
    from modes_tui.runtime.tui_start import TuiStart
    from modes_tui.tui.services import AppServices


def cmd_chat(args: argparse.Namespace) -> int:
    """Chat: the TUI, or with --plain the prompt-toolkit REPL (and pipes)."""
    if not args.plain:
        return cmd_tui(args)
    from modes_tui.repl import (
        PipeConfirmer,
        Printer,
        ReplContext,
        piped_lines,
        run_interactive,
        run_lines,
    )
    from modes_tui.repl.context import describe_modes, mode_setter
    from modes_tui.repl.questions import PromptConfirmer, SetAside
    from modes_tui.repl.sessions import show_resumed
    from modes_tui.runtime import RunOptions, Runtime
    from modes_tui.store.control import ControlFile, RunOnlySetting
    from modes_tui.store.runtime import runtime_state

    runtime = Runtime.for_chat(
        RunOptions.from_args(args),
        settings=settings_for(args),
        note=lambda text: say_err(f"modes-tui: {text}"),
    )
    run_only = not sys.stdin.isatty()
    if run_only and isinstance(runtime.control, ControlFile):
        # a script's `/mode` must not force a mode on every later session
        runtime = dataclasses.replace(runtime, control=RunOnlySetting(runtime.control))
    pack, control, session = runtime.pack, runtime.control, runtime.current
    assert control is not None and session is not None  # a chat's runtime has both
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not args.json
    kept = SetAside()  # what was typed ahead of a question, back in the next prompt
    confirm: Confirmer = PromptConfirmer(kept=kept) if interactive else PipeConfirmer()
    try:
        engine = runtime.engine(confirm)

        from modes_tui.llm.litellm_import import preload

        # warm litellm while the user types, so the first answer does not wait for its import
        preload(offline=runtime.model is None and runtime.offline)

        context = ReplContext(
            engine=engine,
            mode_names=lambda: pack.names,
            describe_modes=partial(describe_modes, pack),
            set_mode=mode_setter(control, pack.name, run_only=run_only),
            history_file=runtime_state(runtime.dirs).input_history,
            session=session,
            pack_name=pack.name,
            typed_ahead=kept,
        )
        printer = Printer(sys.stdout, json_lines=args.json, err=None if interactive else sys.stderr)
        if runtime.resumed is not None:
            show_resumed(runtime.resumed, context, printer, about_pack=runtime.pack_note is None)
        if interactive and (hint := runtime.first_start_hint()):
            printer.write(f"({hint})\n")
        if not interactive:
            lines = piped_lines(sys.stdin.buffer, sys.stderr)
            return asyncio.run(_closing(run_lines(lines, context, printer), runtime.servers))
        return _guarded(_closing(run_interactive(context, printer), runtime.servers))
    finally:
        session.close()


def _guarded(work: Coroutine[object, object, int]) -> int:
    """Run the REPL with the terminal guarded: a death by signal leaves prompt_toolkit's raw
    mode and bracketed paste on, with no chance to undo them; the keeper does."""
    from modes_tui.cli.terminal_guard import REPL_RESET, TerminalGuard

    guard = TerminalGuard.start(output=sys.stdout.fileno(), reset=REPL_RESET)
    try:
        return asyncio.run(work)
    finally:
        guard.release()  # prompt_toolkit gives the terminal back after every prompt


async def _closing(work: Awaitable[int], servers: McpServers | None) -> int:
    """Run `work`, then stop the MCP servers it started, on the same event loop."""
    try:
        return await work
    finally:
        if servers is not None:
            await servers.close()


def cmd_tui(args: argparse.Namespace) -> int:
    """The Textual app, started one way: arguments -> options -> runtime -> services -> app.
    Only textual and the app's widgets load before the first frame: `prepare`, which the app
    runs in its worker right after it, reads the options from the arguments and has
    `TuiStart` build the runtime (settings, pack, stores) and the services (the runtime's
    modules load there too); the engine (with litellm and the model) is built in another
    worker after that."""
    from modes_tui.tui.gc_tuning import freeze_what_is_loaded, hold_collections

    hold_collections()  # before Textual and our widgets are imported
    from modes_tui.cli.terminal_guard import TerminalGuard
    from modes_tui.tui.app import build_app

    # a wrong id fails here, at the terminal, not inside the app
    check_resume(getattr(args, "resume", None))
    freeze_what_is_loaded()
    # a death by signal gives Textual no chance to restore the terminal: the guard does.
    # Its settings are read now; its keeper starts with the services, after the first frame.
    guard = TerminalGuard.start(later=True)
    started: list[TuiStart] = []  # made by the worker; what its runtime opened is closed here

    def prepare() -> AppServices:
        guard.spawn()
        from modes_tui.runtime import RunOptions
        from modes_tui.runtime.tui_start import TuiStart

        start = TuiStart(RunOptions.from_args(args))
        started.append(start)
        return start.services()

    app = build_app(prepare=prepare)

    async def run() -> None:
        try:
            await app.run_async()
        finally:  # on the app's loop, where the servers' tasks live
            guard.release()  # Textual has given the terminal back
            for start in started:
                await start.stop_servers()

    try:
        asyncio.run(run())
    finally:
        guard.release()
        for start in started:
            start.close_sessions()
    # Textual prints an error that ended the app and sets 1: the shell must see it failed
    return app.return_code or EXIT_OK


def check_resume(ref: str | None) -> None:
    """Fail at once, before the app starts, when `--resume` names no session (file names
    only; the session is read after the first frame)."""
    if ref is not None:
        from modes_tui.store.sessions import resolve_session

        resolve_session(ref)
