"""Regenerate the README's screenshots (SVG) in `screenshots/`.

The app runs over the real engine with the scripted model and the keyword classifier, so
every answer and every route is the same from run to run; route times are pinned so the
pictures do not change with the clock. Nothing touches the network or your config:
MODES_TUI_HOME points at a temporary folder.

    PYTHONPATH=. python scripts/screenshots.py            # writes screenshots/*.svg
    PYTHONPATH=. python scripts/screenshots.py --png      # also PNGs (needs rsvg-convert)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ["MODES_TUI_HOME"] = tempfile.mkdtemp(prefix="modes-shots-")

from textual.pilot import Pilot  # noqa: E402

from modes_tui.core.engine.ports import Confirmer  # noqa: E402
from modes_tui.core.packs.profiles import load_pack  # noqa: E402
from modes_tui.core.paths import app_dirs  # noqa: E402
from modes_tui.core.routing.router import Router  # noqa: E402
from modes_tui.core.values.route import Route  # noqa: E402
from modes_tui.llm.fake import ScriptedModel, ScriptedReply  # noqa: E402
from modes_tui.runtime import RunOptions, Runtime  # noqa: E402
from modes_tui.store.control import ControlFile  # noqa: E402
from modes_tui.store.session_log import SessionLog  # noqa: E402
from modes_tui.store.settings import Settings  # noqa: E402
from modes_tui.tui.app import ModesApp, build_app  # noqa: E402
from modes_tui.tui.sessions import StoreSessions  # noqa: E402

SIZE = (140, 44)
MODEL = "scripted/demo"
PINNED_AT = "2026-03-14T09:26:53.000+00:00"

CODE_FILE = """def parse(lines):
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            continue
        yield lines[i]
        i += 1
"""

CODE_ANSWER = """The loop never moves past a blank line: the `continue` skips `i += 1`.

```python
def parse(lines):
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1  # was missing
            continue
        yield lines[i]
        i += 1
```

- add the increment before `continue`
- add a test with a blank line in the middle
"""

REASON_ANSWER = """**About 0.196.** At least two sixes = 1 − P(no six) − P(exactly one six):

1. P(no six) = (5/6)^5 ≈ 0.402
2. P(one six) = 5 · (1/6) · (5/6)^4 ≈ 0.402
3. 1 − 0.402 − 0.402 ≈ **0.196**
"""

CORRECTED = "recommend a commit message for a typo fix in the README"
"""Routed on its keywords; the user wanted the message written."""

SLOW_ANSWER = (
    "The `continue` jumps back to the loop test without moving `i`, so a blank line is "
    "read again and again. Moving the increment above the `continue` (or iterating with "
    "`for line in lines`) means every pass makes progress."
)

TYPED_AHEAD = [
    "and how do I test it?",
    'here is the traceback I got:\nTraceback (most recent call last):\n  File "parse.py", line 4',
]

MESSAGES = [
    "hi! can you recommend a sci-fi novel for a long flight?",
    "why does my python parser in parse.py loop forever? looks like a bug",
    "what's the probability of at least two sixes in five dice rolls",
]


def replies() -> list[ScriptedReply]:
    return [
        ScriptedReply(
            "Try **The Martian** by Andy Weir: fast, funny, and every chapter ends on a problem."
        ),
        ScriptedReply(
            "Let me read it.",
            reasoning="The user says it loops forever; read the file before guessing.",
            tool_calls=[("read_file", {"path": "parse.py"})],
        ),
        ScriptedReply(CODE_ANSWER, chunk_size=24),
        ScriptedReply(REASON_ANSWER, reasoning="Complement: subtract zero and one six."),
        ScriptedReply(
            "Let me look at the file with line numbers.",
            tool_calls=[("run_command", {"command": 'grep -n "" parse.py'})],
        ),
        ScriptedReply("Line 5 is the `continue` that skips `i += 1` on a blank line."),
        ScriptedReply('`git commit -m "Fix typo"`'),
        ScriptedReply(
            "**Fix a typo in the README's install steps**\n\n"
            "The second command said `pip instal`; it now says `pip install`."
        ),
        ScriptedReply(SLOW_ANSWER, chunk_size=6, delay=0.15),
        ScriptedReply("Write a test that feeds `parse` a blank line between two others."),
        ScriptedReply("Noted: the traceback points at the same loop."),
    ]


def pin_the_clock() -> None:
    """Today's date (in the system prompt) and tool timings would change every run."""
    import datetime
    import types

    import modes_tui.core.engine.setup as setup_module
    import modes_tui.core.engine.tool_calls as tool_calls_module

    class Day(datetime.date):
        @classmethod
        def today(cls) -> Day:
            return cls(2026, 3, 14)

    setup_module.dt = types.SimpleNamespace(date=Day, datetime=datetime.datetime)  # type: ignore[assignment]

    import modes_tui.store.control as control_module
    import modes_tui.tui.status as status_module

    class Now(datetime.datetime):
        """The time a mode is forced at, and the time the header says it relative to."""

        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> Now:
            return cls(2026, 3, 14, 9, 26, 53, tzinfo=datetime.UTC).astimezone(tz)

    control_module.datetime = Now  # type: ignore[attr-defined]
    status_module.datetime = Now  # type: ignore[attr-defined]
    tool_calls_module.time = types.SimpleNamespace(  # type: ignore[assignment]
        perf_counter=lambda: 0.0, monotonic=__import__("time").monotonic
    )


class PinnedClockRouter:
    """The engine's router, with route times pinned so screenshots do not change."""

    def __init__(self, router: Router) -> None:
        self._router = router

    def __getattr__(self, name: str) -> Any:
        return getattr(self._router, name)

    async def route(self, *args: Any, **kwargs: Any) -> Route:
        route = await self._router.route(*args, **kwargs)
        took = None if route.duration_ms is None else 0.4
        return replace(route, at=PINNED_AT, duration_ms=took)

    def force(self, name: str) -> Route:
        return replace(self._router.force(name), at=PINNED_AT)


def make_app(
    workdir: Path,
    script: list[ScriptedReply] | None = None,
    session_id: str = "20260314-092653-demo",
    below_confidence: float | None = None,
) -> tuple[ModesApp, SessionLog]:
    pack = load_pack("default")
    if below_confidence is not None:  # the pack's threshold, lowered for one picture
        pack = replace(pack, router=replace(pack.router, below_confidence=below_confidence))
    dirs = app_dirs()
    log = SessionLog.create(dirs, pack=pack.name, model=MODEL, session_id=session_id)
    runtime = Runtime(
        dirs,
        Settings(default_model=MODEL),
        pack,
        RunOptions(classifier="keyword"),  # keywords route the same way on every run
        cwd=workdir,
        control=ControlFile(dirs.control_file, modes=lambda: pack.names),
        session=log,
        model=ScriptedModel().script(*(replies() if script is None else script)),
    )

    def engine(confirm: Confirmer) -> Any:
        built = runtime.engine(confirm)
        built.router = PinnedClockRouter(built.router)  # type: ignore[assignment]
        return built

    def router() -> Any:
        return PinnedClockRouter(runtime.router())

    services = runtime.app_services(
        engine, sessions=StoreSessions(dirs, router), session_id=lambda: log.id
    )
    return build_app(services, tz=UTC), log


async def still(pilot: Pilot[None], app: ModesApp) -> None:
    """Once the prompt's editor is mounted (right after the first frame, in the early
    prompt's place), stop its cursor blinking and the status line's animation."""
    await until(
        pilot, lambda: bool(getattr(app, "conversation", None) and app.conversation.editor_in)
    )
    app.conversation.prompt.cursor_blink = False
    app.conversation.status.animated = False


async def until(pilot: Pilot[None], check: Callable[[], bool], timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise TimeoutError("the screen did not get there")
        await pilot.pause(0.02)


async def say(pilot: Pilot[None], app: ModesApp, text: str) -> None:
    count = len(app.conversation.records)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    await until(
        pilot, lambda: len(app.conversation.records) > count and not app.conversation.turns.running
    )


Save = Callable[[str], None]


async def chat_scenes(pilot: Pilot[None], app: ModesApp, save: Save, _log_id: str) -> None:
    """The main screen after a few turns, then the inspector of the code turn."""
    for message in MESSAGES:
        await say(pilot, app, message)
    await pilot.pause(0.3)
    save("main")
    app.conversation.panel.options.focus()
    app.conversation.panel.options.highlighted = 1  # the code turn: a tool call and two requests
    await pilot.press("enter")
    await pilot.pause(0.4)
    save("inspector")
    await pilot.press("escape")
    await until(pilot, lambda: app.screen is app.conversation)
    await pilot.press("f1")  # the help overlay, over the conversation
    await until(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen")
    await pilot.pause(0.3)
    save("help")
    await pilot.press("escape")
    await until(pilot, lambda: app.screen is app.conversation)


async def shell_scene(pilot: Pilot[None], app: ModesApp, save: Save, _log_id: str) -> None:
    """A forced shell turn waiting on its armed confirmation, then its tool card."""
    app.conversation.prompt.focus()
    await pilot.press("f5")  # force shell
    await until(pilot, lambda: "forced shell" in app.conversation.header.render_text().plain)
    app.conversation.prompt.value = "what's in this folder?"
    await pilot.press("enter")
    await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmToolScreen")
    await until(pilot, lambda: bool(getattr(app.screen, "armed", False)))  # takes answers
    await pilot.pause(0.3)
    save("forced")
    await pilot.press("y")
    await until(pilot, lambda: not app.conversation.turns.running)
    await pilot.pause(0.4)
    save("tool")
    await pilot.press("ctrl+g")  # back to auto


async def replay_scene(pilot: Pilot[None], app: ModesApp, save: Save, log_id: str) -> None:
    """The session replayed against today's router."""
    app.conversation.prompt.value = f"/replay {log_id}"
    await pilot.press("enter")
    await until(pilot, lambda: app.screen.__class__.__name__ == "ReplayScreen")
    await until(pilot, lambda: "turns agree" in str(app.screen.session.summary))
    await pilot.pause(0.4)
    save("replay")
    await pilot.press("escape")


async def correction_scenes(pilot: Pilot[None], app: ModesApp, save: Save, _log_id: str) -> None:
    """The wrong-mode picker, then the corrected turn."""
    await say(pilot, app, CORRECTED)
    await pilot.press("ctrl+e")  # wrong mode: the picker, with the router's probabilities
    await until(pilot, lambda: app.screen.__class__.__name__ == "CorrectScreen")
    await pilot.pause(0.3)
    save("correct")
    choices = [name for name, _ in app.screen.choices]  # type: ignore[attr-defined]
    await pilot.press(str(1 + choices.index("write")))
    await until(
        pilot,
        lambda: (
            len(app.conversation.records[-1].superseded) == 1 and not app.conversation.turns.running
        ),
    )
    await pilot.pause(0.4)
    save("corrected")
    await until(pilot, lambda: len(app.screen_stack) == 1)


async def typeahead_scenes(pilot: Pilot[None], app: ModesApp, save: Save, _log_id: str) -> None:
    """Messages sent while an answer streams wait above the prompt; then a narrow terminal."""
    app.conversation.prompt.focus()
    app.conversation.prompt.value = "explain the fix in more detail"
    await pilot.press("enter")
    await until(pilot, lambda: len(app.conversation.records[-1].answer) > 60)
    for text in TYPED_AHEAD:
        app.conversation.prompt.value = text
        await pilot.press("enter")
    await until(pilot, lambda: len(app.conversation.pending) == 2)
    app.conversation.prompt.value = "one more thought,\nover two lines"
    await pilot.pause(0.3)
    save("typeahead")
    app.conversation.prompt.value = ""
    await until(
        pilot,
        lambda: not len(app.conversation.pending) and not app.conversation.turns.running,
        timeout=30,
    )
    await pilot.resize_terminal(80, 24)
    await pilot.pause(0.4)
    save("narrow")


async def shoot(out: Path) -> list[Path]:
    pin_the_clock()
    workdir = Path(tempfile.gettempdir()) / "modes-tui-demo"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    (workdir / "parse.py").write_text(CODE_FILE)
    app, log = make_app(workdir)
    written: list[Path] = []

    def save(name: str) -> None:
        path = out / f"{name}.svg"
        app.save_screenshot(str(path))
        written.append(path)

    async with app.run_test(size=SIZE) as pilot:
        await still(pilot, app)
        await until(pilot, lambda: app.conversation.engine is not None)
        for scene in (chat_scenes, shell_scene, replay_scene, correction_scenes, typeahead_scenes):
            await scene(pilot, app, save, log.id)
    log.close()
    return written


EDIT_MESSAGE = "there's a bug in parse.py, it loops forever on a blank line: fix it"
EDIT_CALL = {
    "path": "parse.py",
    "old_text": "        if not lines[i].strip():\n            continue",
    "new_text": "        if not lines[i].strip():\n            i += 1  # skip the blank line\n            continue",
}


async def shoot_edit(out: Path) -> list[Path]:
    """The diff confirmation of an edit_file call in the code mode, armed."""
    workdir = Path(tempfile.gettempdir()) / "modes-tui-demo-edit"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    (workdir / "parse.py").write_text(CODE_FILE)
    script = [
        ScriptedReply(
            "The `continue` skips `i += 1`, so a blank line is read for ever. The fix:",
            tool_calls=[("edit_file", EDIT_CALL)],
        ),
        ScriptedReply("Fixed: a blank line now moves `i` on before `continue`."),
    ]
    app, log = make_app(workdir, script, session_id="20260314-092653-edit")
    path = out / "edit.svg"
    async with app.run_test(size=SIZE) as pilot:
        await still(pilot, app)
        await until(pilot, lambda: app.conversation.engine is not None)
        app.conversation.prompt.value = EDIT_MESSAGE
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmToolScreen")
        await until(pilot, lambda: bool(getattr(app.screen, "armed", False)))
        await pilot.pause(0.3)
        app.save_screenshot(str(path))
        await pilot.press("y")
        await until(pilot, lambda: "i += 1  # skip" in (workdir / "parse.py").read_text())
    log.close()
    return [path]


async def shoot_doubt(out: Path) -> list[Path]:
    """The doubt dialog: the router is unsure between chat and shell, before the turn runs."""
    workdir = Path(tempfile.gettempdir()) / "modes-tui-demo-doubt"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    script = [ScriptedReply('`git commit -m "Fix typo in README"`')]
    # Keywords split 0.50/0.50 between chat and shell. At the default pack's threshold (0.7)
    # that is a fallback far below it, which the router is sure of (no question); at 0.5 it
    # is a close call between the two, which the app asks about.
    app, log = make_app(workdir, script, session_id="20260314-092653-doubt", below_confidence=0.5)
    path = out / "doubt.svg"
    async with app.run_test(size=(100, 30)) as pilot:
        await still(pilot, app)
        await until(pilot, lambda: app.conversation.engine is not None)
        app.conversation.prompt.value = CORRECTED
        await pilot.press("enter")
        await until(pilot, lambda: app.screen.__class__.__name__ == "DoubtScreen")
        await until(pilot, lambda: bool(getattr(app.screen, "armed", False)))  # takes answers
        await pilot.pause(0.3)
        app.save_screenshot(str(path))
        await pilot.press("2")  # the runner-up: recorded as a correction
        await until(pilot, lambda: not app.conversation.turns.running)
    log.close()
    return [path]


async def shoot_all(out: Path) -> list[Path]:
    return [*await shoot(out), *await shoot_edit(out), *await shoot_doubt(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--png", action="store_true", help="also write PNGs with rsvg-convert")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    written = asyncio.run(shoot_all(args.out))
    for path in written:
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
        if args.png:
            converter = shutil.which("rsvg-convert")
            if converter is None:
                sys.exit("rsvg-convert is not installed (Debian: apt-get install librsvg2-bin)")
            subprocess.run([converter, str(path), "-o", str(path.with_suffix(".png"))], check=True)


if __name__ == "__main__":
    main()
