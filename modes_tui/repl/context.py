"""What the REPL is given: the engine and the few things slash commands touch, and the
REPL's words for `/modes` and `/mode NAME` (what they do is `frontend.modes`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from modes_tui.frontend.modes import ModeSetting, mode_rows, set_mode, setting_meaning
from modes_tui.repl.questions import SetAside

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.store.resume import CurrentSession


@dataclass
class ReplContext:
    """The wiring the REPL receives; it is also the `frontend.sessions.SessionHost`."""

    engine: TurnEngine
    """Runs turns."""
    mode_names: Callable[[], Sequence[str]]
    """The pack's mode names, for completion and /modes."""
    describe_modes: Callable[[], str]
    """A short listing of the modes for /modes."""
    set_mode: Callable[[str], str]
    """Writes the control file; returns a confirmation line. Raises ModesError."""
    history_file: Path | None = None
    """Where input history persists (the state dir)."""
    last_turn: TurnTranscript | None = None
    """The latest turn, folded from its events: its route and requests for /why."""
    turns_sent: int = 0
    """Messages sent in this REPL (numbers the folded turns)."""
    session: CurrentSession | None = None
    """The session being recorded, for /resume, /fork and /rename."""
    pack_name: str = ""
    """The pack in use (a resumed session from another pack is pointed out)."""
    typed_ahead: SetAside = field(default_factory=SetAside)
    """Text typed before a confirmation question, put in the next prompt."""

    @property
    def current_session(self) -> CurrentSession | None:
        """The session being recorded."""
        return self.session

    @property
    def turn_running(self) -> bool:
        """Never while a command runs: the REPL reads a command only between turns."""
        return False

    @property
    def turn_engine(self) -> TurnEngine:
        """The engine (built before the first prompt)."""
        return self.engine


def describe_modes(pack: Pack) -> str:
    """`/modes` in the REPL: one line per mode of `pack`, its name and description."""
    return "\n".join(f"{row.name:<10} {row.description[:90]}" for row in mode_rows(pack))


def mode_setter(control: ModeSetting, pack_name: str, *, run_only: bool) -> Callable[[str], str]:
    """`/mode VALUE` in the REPL: set it (`frontend.modes.set_mode`, raises UnknownMode) and
    say what it does; `run_only`: the REPL reads a pipe and the file is not written."""

    def set_(value: str) -> str:
        set_mode(control, value)
        if run_only:
            return (
                f"mode setting: {value} for this run only; the control file is not "
                "changed when the REPL reads a pipe (`/mode auto` hands it back)"
            )
        meaning = setting_meaning(value, f" --pack {pack_name}")
        return f"mode setting: {value} for pack {pack_name} ({meaning})"

    return set_
