"""Slash commands: the one table the app and the REPL share, parsing, and completion.

Each command is listed once, with its usage, its help line and where it is available
(the app, the REPL or both); the app's `/help`, the REPL's `/help`, both completers and
`frontend.lines.read_line` read this table. Pure functions, no textual or prompt_toolkit:
each front end decides what a command does. A line that starts with `/` is a command; `//text`
sends `/text` as a message. `/MODE text` (e.g. `/code why is this slow`) is a one-shot:
that one message goes to MODE and nothing is forced for what follows. Commands win over
modes of the same name (a mode called `help` is still forced with `/mode help`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from modes_tui.core.control_setting import AUTO, OFF
from modes_tui.core.errors import UnknownMode, suggest

Surface = Literal["app", "repl"]
"""Where a command can be typed: the Textual app or the plain REPL."""
BOTH: frozenset[Surface] = frozenset(("app", "repl"))
APP: frozenset[Surface] = frozenset(("app",))


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command: how it is called, what it does, and where."""

    name: str
    """With the slash, e.g. `/mode`."""
    usage: str
    """How to call it."""
    help: str
    """What it does."""
    where: frozenset[Surface] = BOTH
    """The front ends that offer it."""
    aliases: tuple[str, ...] = ()
    """Other names it answers to (not listed, not completed)."""
    repl_help: str = ""
    """The REPL's help line where the command does something else there ("" = `help`)."""

    def help_for(self, surface: Surface) -> str:
        """The help line on `surface`."""
        return self.repl_help if surface == "repl" and self.repl_help else self.help


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("/mode", "/mode NAME|auto|off", "force a mode, let the router pick, or use none"),
    CommandSpec("/modes", "/modes", "list the modes of the pack and their keys"),
    CommandSpec("/clear", "/clear", "start the conversation afresh"),
    CommandSpec(
        "/compact",
        "/compact",
        "summarise the earlier turns for the model (the chat keeps them)",
    ),
    CommandSpec("/sessions", "/sessions", "pick a recorded session to replay", APP),
    CommandSpec("/replay", "/replay ID", "replay a recorded session, with re-routing", APP),
    CommandSpec("/resume", "/resume [ID|latest]", "continue a saved session here"),
    CommandSpec("/fork", "/fork [N]", "start a new session from turn N of this one"),
    CommandSpec("/rename", "/rename TITLE", "give this session a title"),
    CommandSpec("/export", "/export", "write this conversation to a Markdown file", APP),
    CommandSpec(
        "/why",
        "/why",
        "open the inspector for the last turn",
        repl_help="print why the last turn went where it did, and the request it sent",
    ),
    CommandSpec("/copy", "/copy", "copy the last answer to the clipboard", APP),
    CommandSpec(
        "/wrong",
        "/wrong [MODE|undo]",
        "wrong mode: answer the last turn again in MODE (a picker without); undo forgets it",
        repl_help="wrong mode: answer the last turn again in MODE; undo forgets it",
    ),
    CommandSpec(
        "/undo",
        "/undo [N]",
        "put back the files the last turn (or the last N turns) changed; says which",
    ),
    CommandSpec("/help", "/help", "keys and commands"),
    CommandSpec(
        "/quit", "/quit", "leave modes-tui", aliases=("/exit",), repl_help="leave (Ctrl+D too)"
    ),
)


ONE_SHOT_USAGE = "/MODE text"
ONE_SHOT_HELP = "answer this one message in MODE (/code why is this slow); nothing stays forced"
"""The help line of `/MODE text`, under the commands in both front ends' `/help`."""


def commands_for(surface: Surface) -> tuple[CommandSpec, ...]:
    """The commands a front end offers, in table order."""
    return tuple(spec for spec in COMMANDS if surface in spec.where)


def find_command(name: str, surface: Surface) -> CommandSpec | None:
    """The command called `name` (or one of its aliases) on `surface`, if there is one."""
    for spec in commands_for(surface):
        if name == spec.name or name in spec.aliases:
            return spec
    return None


COMMAND_NAMES = tuple(spec.name for spec in commands_for("app"))
"""The app's commands (parsing and completion in the prompt)."""


@dataclass(frozen=True, slots=True)
class OneShot:
    """`/MODE text`: send `text` to `mode` for this one message."""

    mode: str
    """The mode that answers, decided by the caller."""
    text: str
    """The message, without the `/MODE ` in front (new lines kept)."""

    @property
    def force(self) -> str:
        """The mode of this one message (what the engine's `force=` takes)."""
        return self.mode


SUGGESTIONS = 3
"""At most how many commands a "did you mean" names."""


def did_you_mean(typed: str, surface: Surface, modes: Sequence[str] = ()) -> list[str]:
    """The commands of `surface` (or the `/MODE` one-shots of `modes`) an unknown `typed`
    (`/mdoe`, `/cdoe`) was probably meant to be.

    Nothing for a command, an alias or a mode name: `/NAME text` of a mode is not a typo
    (a one-shot turn in that mode), so it is never "corrected" into a command. Close means
    a prefix (`/ses`), or a few letters off, swapped ones counting once (`/mdoe`, `/halp`).
    """
    word = typed.strip().lower()
    if not word.startswith("/") or len(word) < 2:
        return []
    if find_command(word, surface) is not None or word[1:] in {m.lower() for m in modes}:
        return []
    names = [spec.name for spec in commands_for(surface)]
    names += [f"/{mode}" for mode in one_shot_modes(modes)]
    scored = []
    for name in names:
        distance = 0 if len(word) >= 3 and name.startswith(word) else edit_distance(word, name)
        if distance <= (1 if len(name) <= 6 else 2):
            scored.append((distance, name))
    return [name for _, name in sorted(scored)[:SUGGESTIONS]]


def unknown_command(typed: str, surface: Surface, modes: Sequence[str] = ()) -> str:
    """What both front ends say about a command that is not one: `unknown command /mdoe;
    did you mean /mode? /help lists the commands`."""
    close = did_you_mean(typed, surface, modes)
    hint = f"; did you mean {' or '.join(close)}?" if close else ";"
    return f"unknown command {typed}{hint} /help lists the commands"


def edit_distance(a: str, b: str) -> int:
    """Letters to insert, delete, change or swap with a neighbour to turn `a` into `b`."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        row = [i]
        for j, char_b in enumerate(b, 1):
            cost = 0 if char_a == char_b else 1
            best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                best = min(best, previous2[j - 2] + 1)
            row.append(best)
        previous2, previous = previous, row
    return previous[-1]


ErrorKind = Literal["error", "usage", "unknown"]
"""error: the input is wrong; usage: a usage line; unknown: no command of that name."""


class CommandError(ValueError):
    """A command that cannot run as typed; the message says how to fix it."""

    def __init__(self, message: str, *, kind: ErrorKind = "error") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        """The REPL prints an error after `error: `, a usage line or an unknown command bare."""


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed, checked command."""

    name: str
    """With the slash."""
    argument: str = ""
    """The rest of the line, stripped."""


def is_command(text: str) -> bool:
    """Whether the line is a command (not `//`, which escapes a leading slash)."""
    return text.startswith("/") and not text.startswith("//")


def message_text(text: str) -> str:
    """What to send for a non-command line: `//x` becomes `/x`."""
    return text[1:] if text.startswith("//") else text


def check_argument(name: str, argument: str, settings: Sequence[str], surface: Surface) -> str:
    """The argument of command `name` as it runs on `surface` (`settings`: what `/mode`
    accepts); CommandError, in that front end's words, says how to fix a bad one."""
    check = ARGUMENT_CHECKS.get(name)
    if check is not None:
        return check(argument, settings, surface)
    if argument:
        raise CommandError(f"{name} takes no argument (got {argument!r})")
    return argument


def _mode_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if not argument:
        if surface == "repl":
            raise CommandError("usage: /mode NAME | auto | off", kind="usage")
        raise CommandError(f"/mode needs a value: {' | '.join(settings)}")
    if argument not in settings:
        if surface == "repl":  # the words of the control file (and of `modes-tui mode`)
            modes = [s for s in settings if s not in (AUTO, OFF)]
            raise CommandError(str(UnknownMode(argument, [AUTO, OFF, *modes])))
        hint = suggest(argument, settings)
        choices = ", ".join(settings)
        raise CommandError(
            f"unknown mode {argument!r}: {hint} (choose one of: {choices})"
            if hint
            else f"unknown mode {argument!r}; choose one of: {choices}"
        )
    return argument


def _replay_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if not argument:
        raise CommandError("/replay needs a session id (/sessions lists them)")
    return argument


def _resume_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    return argument or "latest"


def _fork_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if argument and not (argument.isdigit() and int(argument) >= 1):
        if surface == "repl":
            raise CommandError(f"/fork takes a turn number, not {argument!r}")
        raise CommandError(f"/fork takes a turn number from 1 (got {argument!r})")
    return argument


def _rename_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if not argument:
        if surface == "repl":
            raise CommandError("usage: /rename TITLE", kind="usage")
        raise CommandError("/rename needs a title, e.g. /rename parser crash")
    return argument


def _wrong_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if surface == "repl":
        return argument  # the engine refuses a bad mode there, naming the turn it would correct
    choices = wrong_choices(settings)
    if argument and argument not in choices:
        raise CommandError(
            f"/wrong takes a mode or undo, not {argument!r}; choose one of: {', '.join(choices)}"
        )
    return argument


UNDO_USAGE = "usage: /undo [N]  (N: how many turns that changed files, default 1)"


def _undo_argument(argument: str, settings: Sequence[str], surface: Surface) -> str:
    if argument and not (argument.isdigit() and int(argument) >= 1):
        raise CommandError(UNDO_USAGE, kind="usage")
    return argument


ArgumentCheck = Callable[[str, Sequence[str], Surface], str]
"""Checks a command's argument against the settings on a surface; returns it as it runs."""

ARGUMENT_CHECKS: dict[str, ArgumentCheck] = {
    "/mode": _mode_argument,
    "/replay": _replay_argument,
    "/resume": _resume_argument,
    "/fork": _fork_argument,
    "/rename": _rename_argument,
    "/wrong": _wrong_argument,
    "/undo": _undo_argument,
}
"""The argument checks by command, for both front ends (each in its own words where the
two differ); a command not listed takes no argument."""


UNDO = "undo"


def wrong_choices(settings: Sequence[str]) -> list[str]:
    """What `/wrong` accepts: every mode (not auto or off), then undo."""
    return [*(s for s in settings if s not in (AUTO, OFF)), UNDO]


def one_shot_modes(settings: Sequence[str]) -> list[str]:
    """The modes `/MODE text` reaches: every mode that is not also a command's name."""
    return [s for s in settings if s not in (AUTO, OFF) and not _is_command_name(f"/{s}")]


def _is_command_name(name: str) -> bool:
    return any(name == spec.name or name in spec.aliases for spec in COMMANDS)


def one_shot(text: str, settings: Sequence[str]) -> OneShot | None:
    """`/code why is this slow` -> OneShot("code", "why is this slow"); None when the line
    is not `/MODE ...` for a mode in `settings` (a command, `//text`, an unknown word).

    Raises CommandError for `/MODE` with no message: forcing by accident would last, so
    the user is told to type the message (or to use `/mode MODE` to force what follows).
    """
    if not is_command(text):
        return None
    stripped = text.lstrip()
    head = stripped.split(maxsplit=1)[0] if stripped.strip() else ""
    mode = head[1:].lower()
    if mode not in one_shot_modes(settings):
        return None
    message = stripped[len(head) :].strip()
    if not message:
        raise CommandError(
            f"type a message after {head}: `{head} why is this slow` answers that one "
            f"message in {mode}; `/mode {mode}` forces {mode} for what follows"
        )
    return OneShot(mode, message)


def mode_settings(modes: Sequence[str]) -> list[str]:
    """What `/mode` accepts: every mode, then auto and off."""
    return [*modes, AUTO, OFF]


def complete(text: str, settings: Sequence[str], session_ids: Sequence[str] = ()) -> str | None:
    """The whole line completed, or None: `/mo` -> `/mode`, `/mode co` -> `/mode code`."""
    if not is_command(text):
        return None
    head, space, rest = text.partition(" ")
    if not space:
        # commands first: they win over a mode of the same name
        modes = [f"/{mode}" for mode in one_shot_modes(settings)]
        for name in (*COMMAND_NAMES, *modes):
            if name.startswith(head.lower()) and name != head.lower():
                return name
        return None
    choices: Sequence[str] = ()
    if head.lower() == "/mode":
        choices = settings
    elif head.lower() in ("/replay", "/resume"):
        choices = session_ids
    elif head.lower() == "/wrong":
        choices = wrong_choices(settings)
    if not rest:
        return f"{head} {choices[0]}" if choices else None
    for choice in choices:
        if choice.startswith(rest) and choice != rest:
            return f"{head} {choice}"
    return None
