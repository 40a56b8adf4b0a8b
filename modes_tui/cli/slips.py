"""Usage errors that say what was meant: `did you mean` for verbs, actions and options.

argparse names a slip by its symptom: `modes-tui sessions --serch x` says "argument ACTION:
invalid choice: 'x'", because the unknown option left `x` where an action goes. `SlipParser`
looks at the command line it was given before it words the error: an unknown option is
named first, with the closest known one (`unknown option --serch: did you mean
--search?`), and a mistyped verb or choice gets the closest name (`unknown verb 'sesions':
did you mean 'sessions'?`). With nothing close, argparse's own message stands. The verbs'
parsers are `SlipParser`s too (argparse makes sub-parsers of the parent's class).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from modes_tui.core.errors import suggest

__all__ = ["SlipParser"]

_INVALID_CHOICE = re.compile(r"argument (?P<what>[^:]+): invalid choice: '(?P<word>[^']*)'")
_NUMBER = re.compile(r"-\d+(\.\d*)?")


class SlipParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose usage errors suggest what was meant."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.given: list[str] = []
        """The arguments this parser was last asked to parse (its part of the line)."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {self.reworded(message)}\n")

    def reworded(self, message: str) -> str:
        """`message` as argparse wrote it, said with what was meant when a name is close."""
        unknown = self.unknown_option()
        if unknown is not None:
            option, parsers = unknown
            known = [name for parser in parsers for name in parser.option_names()]
            hint = suggest(option, known, quote=False)
            if hint:
                return f"unknown option {option}: {hint}"
            if "invalid choice" in message:  # the option's value was taken for a choice
                return f"unknown option {option} (see {self.prog} --help)"
            return message
        found = _INVALID_CHOICE.match(message)
        if found is None:
            return message
        what, word = found["what"], found["word"]
        hint = suggest(word, self.choices_of(what))
        if not hint:
            return message
        if what.startswith("-"):
            return f"invalid choice {word!r} for {what}: {hint}"
        return f"unknown {what.lower()} {word!r}: {hint}"

    def unknown_option(self) -> tuple[str, list[SlipParser]] | None:
        """The first option on this parser's part of the line that neither it nor the verb
        parsers it leads to know, and those parsers; None when every option is known."""
        parsers: list[SlipParser] = [self]
        for token in self.given:
            if token == "--":
                break
            sub = parsers[-1].verb_parser(token)
            if sub is not None:
                parsers.append(sub)
                continue
            if not token.startswith("-") or token == "-" or _NUMBER.fullmatch(token):
                continue
            option = token.split("=", 1)[0]
            if not any(parser.knows(option) for parser in parsers):
                return option, parsers
        return None

    def knows(self, option: str) -> bool:
        """Whether `option` is one of this parser's (or a prefix argparse accepts for one)."""
        if option in self._option_string_actions:
            return True
        if option.startswith("--") and self.allow_abbrev:
            return any(name.startswith(option) for name in self.option_names())
        return False

    def option_names(self) -> list[str]:
        return [name for name in self._option_string_actions if name.startswith("--")]

    def verb_parser(self, token: str) -> SlipParser | None:
        """The parser of the verb (or action) `token` names here, if it names one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(token)
                if isinstance(sub, SlipParser):
                    return sub
        return None

    def choices_of(self, metavar: str) -> list[str]:
        """The choices of the argument argparse called `metavar` in its message."""
        for action in self._actions:
            names = {action.metavar, action.dest, *action.option_strings}
            if action.choices is not None and metavar in {str(n) for n in names if n}:
                return [str(choice) for choice in action.choices]
            if action.choices is not None and "/".join(action.option_strings) == metavar:
                return [str(choice) for choice in action.choices]
        return []
