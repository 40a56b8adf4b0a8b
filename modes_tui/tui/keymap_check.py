"""What is wrong with a `keymap:` setting, said before the app quietly ignores it.

Textual takes any keymap: an id it has no binding for is skipped, a key name it cannot
produce is bound and never fires, and a key given to another action is simply taken from
the one that had it. Each is a mistake a user wants to hear about: `keymap_problems` names
them (the app shows them as a settings error and applies the rest).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.keys import Keys, key_to_character

from modes_tui.tui.keys import MODE_BINDING_PREFIX, ModeKey

BINDING_IDS = frozenset(
    {
        "answer.copy",
        "app.help",
        "confirm.no",
        "confirm.yes",
        "correct.close",
        *(f"correct.pick{n}" for n in range(1, 10)),  # the correction dialog's 1-9
        "doubt.pick",
        "doubt.runner_up",
        "focus.next",
        "help.close",
        "inspector.close",
        "inspector.copy",
        "inspector.last",
        "mode.auto",
        "mode.cycle",
        "mode.off",
        "panel.inspect",
        "panel.toggle",
        "prompt.focus",
        "question.no",
        "question.yes",
        "replay.close",
        "replay.panel",
        "sessions.close",
        "sessions.resume",
        "turn.cancel",
        "turn.correct",
        "turn.keep_hand_off",
        "turn.retry",
    }
)
"""Every binding id of the app's screens (a test holds this equal to their BINDINGS); each
mode adds `mode.NAME`."""

_MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})
_NAMED = frozenset(k.value for k in Keys if "+" not in k.value and not k.value.startswith("<"))


def valid_key(key: str) -> bool:
    """Whether Textual can report `key` (`f5`, `ctrl+k`, `question_mark`, `x`)."""
    *modifiers, base = key.strip().split("+")
    if not base or any(modifier not in _MODIFIERS for modifier in modifiers):
        return False
    return len(base) == 1 or base in _NAMED or key_to_character(base) is not None


def keymap_problems(keymap: Mapping[str, str], mode_keys: Sequence[ModeKey]) -> list[str]:
    """One sentence per problem in the (normalised) keymap, in its order."""
    ids = BINDING_IDS | {mk.binding_id for mk in mode_keys}
    defaults = {mk.key: mk.binding_id for mk in mode_keys if mk.key}
    problems = []
    for action, keys in keymap.items():
        if action not in ids:
            modes = ", ".join(mk.mode for mk in mode_keys)
            problems.append(
                f"{action!r} is no action (a mode name, auto, off, cycle, or an id such as "
                f"panel.toggle; modes: {modes})"
            )
            continue
        for key in keys.split(","):
            if not valid_key(key):
                problems.append(f"{action}: {key.strip()!r} is no key (f5, ctrl+k, a letter)")
                continue
            owner = defaults.get(key.strip())
            if owner is not None and owner != action and owner not in keymap:
                name = owner.removeprefix(MODE_BINDING_PREFIX)
                problems.append(f"{action}: {key.strip()} was {name}'s key; {name} has none now")
    return problems
