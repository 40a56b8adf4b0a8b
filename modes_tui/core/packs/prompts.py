"""Prompt templates: the pack's base system prompt and each mode's instructions.

Templates are Jinja2 with StrictUndefined, so a misspelt variable is a load-time problem,
not a silent blank. Lookup follows convention: `prompts/<pack>/system.md` and
`prompts/<pack>/<mode>/instructions.md`; user prompts shadow shipped ones.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from modes_tui.core.files import read_bytes
from modes_tui.core.packs.ports import Mode

DEFAULT_SYSTEM = (
    "You are a helpful assistant in a terminal. Answer in Markdown. Today is {{ date }}."
)


@dataclass(frozen=True, slots=True)
class TemplateProblem:
    """A template that does not render, with where it lives."""

    file: str
    """The template's file (or the profile file for inline instructions)."""
    field: str
    """Which template: `system`, `instructions`."""
    message: str
    """What went wrong."""


@dataclass(frozen=True, slots=True)
class Template:
    """One template's source and where it came from."""

    source: str
    """Jinja2 source text."""
    origin: str
    """The file it came from, or `<inline>`/`<built-in>`."""


@dataclass(frozen=True, slots=True)
class ModeView:
    """What a template sees as `mode`: safe, plain fields only."""

    name: str
    description: str
    thinking: str
    tools: tuple[str, ...]


@dataclass(frozen=True)
class PromptSet:
    """The templates of one pack."""

    system: Template
    """The base system prompt shared by every mode."""
    instructions: Mapping[str, Template] = field(default_factory=dict)
    """Per-mode instruction templates found on disk."""
    unreadable: tuple[TemplateProblem, ...] = ()
    """Template files found but not usable (binary, not UTF-8, too big); `check` lists them."""

    @classmethod
    def discover(cls, roots: Sequence[Path], mode_names: Iterable[str]) -> PromptSet:
        """Find the templates for `mode_names` in `roots`, first root wins."""
        unreadable: list[TemplateProblem] = []
        system = _first(roots, "system.md", unreadable) or Template(DEFAULT_SYSTEM, "<built-in>")
        found: dict[str, Template] = {}
        for name in mode_names:
            template = _first(roots, f"{name}/instructions.md", unreadable)
            if template is not None:
                found[name] = template
        return cls(system, found, tuple(unreadable))

    def instructions_for(self, profile: Mode) -> Template | None:
        """The profile's instructions: inline text wins over the conventional file."""
        if profile.instructions.strip():
            return Template(profile.instructions, profile.source or "<inline>")
        return self.instructions.get(profile.name)

    def render_system(self, locals_: Mapping[str, Any]) -> str:
        """The base system prompt for this turn."""
        return _render(self.system.source, locals_)

    def render_instructions(self, profile: Mode, locals_: Mapping[str, Any]) -> str:
        """The mode's instructions for this turn ('' when the mode has none)."""
        template = self.instructions_for(profile)
        return _render(template.source, locals_) if template is not None else ""

    def check(self, profiles: Iterable[Mode]) -> list[TemplateProblem]:
        """Render every template with sample locals; report the ones that fail."""
        problems: list[TemplateProblem] = list(self.unreadable)
        profiles = list(profiles)
        sample = profiles[0] if profiles else None
        try:
            self.render_system(template_locals(sample))
        except jinja2.TemplateError as error:
            problems.append(TemplateProblem(self.system.origin, "system", _describe(error)))
        for profile in profiles:
            template = self.instructions_for(profile)
            if template is None:
                continue
            try:
                _render(template.source, template_locals(profile))
            except jinja2.TemplateError as error:
                where = (
                    "instructions" if template.origin != profile.source else "instructions (inline)"
                )
                problems.append(TemplateProblem(template.origin, where, _describe(error)))
        return problems


def template_locals(
    profile: Mode | None,
    inputs: Mapping[str, Any] | None = None,
    *,
    today: dt.date | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The locals every template gets: mode, inputs, date, cwd."""
    mode = (
        ModeView(profile.name, profile.description, profile.thinking, profile.tools)
        if profile is not None
        else ModeView("off", "", "off", ())
    )
    return {
        "mode": mode,
        "inputs": dict(inputs or {}),
        "date": (today or dt.date.today()).isoformat(),
        "cwd": cwd if cwd is not None else os.getcwd(),
    }


_ENV = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=False,
    autoescape=False,
)


def _render(source: str, locals_: Mapping[str, Any]) -> str:
    return _ENV.from_string(source).render(**locals_).strip()


MAX_PACK_FILE_BYTES = 1024 * 1024
"""The largest pack file (profile, router.yaml, template) loaded: a bigger one is almost
surely the wrong file, and every example in it would be encoded at start."""


class UnreadablePackFile(ValueError):
    """A pack file that cannot be used as text; the message says why."""


def read_pack_file(path: Path) -> str:
    """The text of a pack file; `UnreadablePackFile` says why not (size, binary, encoding)."""
    try:
        size = path.stat().st_size
        if size > MAX_PACK_FILE_BYTES:
            raise UnreadablePackFile(
                f"is {size / 1024 / 1024:.1f} MB; a pack file may hold at most "
                f"{MAX_PACK_FILE_BYTES // 1024 // 1024} MB (is it the right file?)"
            )
        # A linked pack file is fine (packs are the user's own files); a FIFO or a
        # device is not: it would hang the load or never end.
        data = read_bytes(path, "pack", follow=True)
    except OSError as error:
        raise UnreadablePackFile(f"cannot read: {error.strerror or error}") from None
    if b"\0" in data:
        raise UnreadablePackFile("is a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadablePackFile(f"is not UTF-8 text (byte {error.start})") from None


def _first(
    roots: Sequence[Path], relative: str, unreadable: list[TemplateProblem]
) -> Template | None:
    for root in roots:
        path = root / relative
        if path.is_file():
            try:
                return Template(read_pack_file(path), str(path))
            except UnreadablePackFile as error:
                unreadable.append(TemplateProblem(str(path), "", str(error)))
                return None
    return None


def _describe(error: jinja2.TemplateError) -> str:
    line = getattr(error, "lineno", None)
    where = f" (line {line})" if line else ""
    return f"does not render{where}: {error.message or type(error).__name__}"
