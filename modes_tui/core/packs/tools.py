"""A pack's own Python tools, named in its `router.yaml` by `python:` references.

    tools:
      - python:tools.py:make_tools          # a file, relative to the pack folder
      - python:acme_support.tools:TOOLS     # or a module importable from sys.path

The object a reference names is a `Tool` (a function decorated with `@tool`), a list or
tuple of tools and plain functions, or any other callable: a factory, called with no
arguments, that returns one of those. A factory is called once at load (to check the tools
and learn their names) and again for every session, so state it creates (the support pack's
order store) starts fresh each time. A file is imported as a module of its own folder, so it
may import its sibling files relatively (`from .seed import orders`).

Resolving never raises anything but `PackToolsError`, whose message names the reference and
what is wrong; the pack reader turns it into a problem of `router.yaml`, key `tools[i]`.
Loading a pack with such a reference runs its code: a pack is trusted like any script.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from modes_tui.core.errors import cut_repr
from modes_tui.core.tools.registry import Tool, tool

PREFIX = "python:"
_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_PACKAGE_PREFIX = "_modes_tui_pack_tools"
CONTRACT = (
    "a Tool, a list of tools and functions, or a factory (a callable without arguments) "
    "that returns one of those"
)


class PackToolsError(ValueError):
    """A `python:` tools reference that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class PackTools:
    """One resolved `python:` reference: the tools a pack brings of its own."""

    reference: str
    """The reference as written in router.yaml."""
    names: tuple[str, ...]
    """The names of the tools it provides, as found at load."""
    provide: Callable[[], list[Tool]]
    """Makes the tools; a factory's tools are fresh on every call."""

    def make(self) -> list[Tool]:
        """The tools, made anew when the reference names a factory."""
        return self.provide()


def resolve(reference: str, pack_dir: Path, source: str) -> PackTools:
    """The tools behind `python:<file.py or module>:<object>`; `PackToolsError` if unusable.

    `source` is written on every tool (`Tool.source`), e.g. `pack:support`.
    """
    obj = load_object(reference, pack_dir)
    target = reference.removeprefix(PREFIX)
    if isinstance(obj, Tool | list | tuple) or not callable(obj):
        tools = _as_tools(obj, target, source)

        def provide() -> list[Tool]:
            return list(tools)

    else:
        factory: Callable[[], Any] = obj

        def provide() -> list[Tool]:
            return _as_tools(_call(factory, target), target, source)

        tools = provide()
    names = [t.name for t in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise PackToolsError(f"{reference}: names more than one tool {', '.join(twice)}")
    return PackTools(reference, tuple(names), provide)


def load_object(reference: str, pack_dir: Path) -> Any:
    """The object a `python:` reference names; `PackToolsError` says what is wrong."""
    if not reference.startswith(PREFIX):
        raise PackToolsError(
            f"{cut_repr(reference)} is not a python: reference; write python:<file.py>:<object> "
            "or python:<package.module>:<object>"
        )
    target, colon, attribute = reference.removeprefix(PREFIX).rpartition(":")
    if not colon or not target or not attribute.isidentifier():
        raise PackToolsError(
            f"{cut_repr(reference)} must be python:<file.py>:<object> or python:<package.module>:<object>"
            " (the object after the last colon)"
        )
    module = load_module(target, pack_dir, reference)
    try:
        return getattr(module, attribute)
    except AttributeError:
        offered = _candidates(module)
        hint = difflib.get_close_matches(attribute, offered, n=1, cutoff=0.6)
        known = (
            f"did you mean {cut_repr(hint[0])}?"
            if hint
            else f"it has: {', '.join(offered) or 'none'}"
        )
        raise PackToolsError(
            f"{reference}: {target} has no object {cut_repr(attribute)} ({known})"
        ) from None


def _candidates(module: types.ModuleType) -> list[str]:
    """The names in `module` a reference could mean: its own callables, tools and lists."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        own = getattr(value, "__module__", None) == module.__name__ and callable(value)
        if own or isinstance(value, Tool | list | tuple):
            names.append(name)
    return sorted(names)


def load_module(target: str, pack_dir: Path, reference: str = "") -> types.ModuleType:
    """The module `target` names: a .py file (relative to `pack_dir`) or a dotted module."""
    reference = reference or f"{PREFIX}{target}"
    if target.endswith(".py") or "/" in target or "\\" in target:
        return _import_file(reference, pack_dir, Path(target).expanduser())
    if _MODULE_NAME.match(target):
        return _import_module(reference, target)
    raise PackToolsError(
        f"{reference}: {cut_repr(target)} is neither a .py file nor a dotted module name"
    )


def _import_file(reference: str, pack_dir: Path, relative: Path) -> types.ModuleType:
    path = relative if relative.is_absolute() else pack_dir / relative
    if not path.is_file():
        raise PackToolsError(f"{reference}: no file {path}")
    folder = path.resolve().parent
    # The file becomes a module of a package standing for its folder, so its sibling files
    # import relatively and two packs' tools.py never meet in sys.modules.
    package = f"{_PACKAGE_PREFIX}_{hashlib.sha1(str(folder).encode()).hexdigest()[:12]}"
    if package not in sys.modules:
        holder = types.ModuleType(package)
        holder.__path__ = [str(folder)]
        sys.modules[package] = holder
    name = f"{package}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not path.stem.isidentifier():
        raise PackToolsError(f"{reference}: {path.name} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and relative imports look the module up here
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - any failure of the pack's code is its problem
        if previous is not None:
            sys.modules[name] = previous
        else:
            sys.modules.pop(name, None)
        raise PackToolsError(
            f"{reference}: importing {path} failed: {_first_line(error)}"
        ) from None
    return module


def _import_module(reference: str, name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any failure of the pack's code is its problem
        raise PackToolsError(
            f"{reference}: importing {name} failed: {_first_line(error)}"
        ) from None


def _call(factory: Callable[[], Any], target: str) -> Any:
    try:
        return factory()
    except Exception as error:  # noqa: BLE001 - any failure of the pack's code is its problem
        raise PackToolsError(f"python:{target}: calling it failed: {_first_line(error)}") from None


def _as_tools(obj: Any, target: str, source: str) -> list[Tool]:
    items: Iterable[Any]
    if isinstance(obj, Tool):
        items = [obj]
    elif isinstance(obj, list | tuple):
        items = obj
    else:
        raise PackToolsError(f"python:{target} gave {_kind(obj)}; it must be {CONTRACT}")
    tools: list[Tool] = []
    for index, item in enumerate(items):
        if isinstance(item, Tool):
            built = item
        elif callable(item) and not isinstance(item, type):
            try:
                built = tool(item)
            except TypeError as error:
                raise PackToolsError(f"python:{target}: item {index}: {error}") from None
        else:
            raise PackToolsError(
                f"python:{target}: item {index} is {_kind(item)}, not a Tool or a function"
            )
        tools.append(replace(built, source=source))
    if not tools:
        raise PackToolsError(f"python:{target} gave no tools; it must be {CONTRACT}")
    return tools


def _kind(obj: Any) -> str:
    if obj is None:
        return "None"
    name = type(obj).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def tool_names(sources: Sequence[PackTools]) -> frozenset[str]:
    """Every tool name the references provide."""
    return frozenset(name for source in sources for name in source.names)
