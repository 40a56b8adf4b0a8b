"""`modes-tui init`: find the providers this machine can reach, propose config.yaml, write it on yes.

What is found (`llm.discovery`): API key variables in the environment and model servers on
127.0.0.1, within bounded time (each request ~2 s, the whole lookup ~6 s; every server
given up on is named with its port and why). What is proposed: an alias per model (a local
server's through a litellm provider that needs no key variable, with the context window the
server reports), and the roles — `fast` and `strong` from the
first hosted provider whose key is set (its small and its large model), else from the local
models (the smallest and the largest), each pick explained. Keys are never written: an alias
names the variable (`api_key_env:`).

Nothing is written unseen: a new file is shown whole, a changed one as a diff. `--yes` writes
without asking; without it, a terminal is asked and a pipe only shows. The file is written
atomically, 0600, and only after the proposal loads as settings would.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.cli.common import EXIT_FAILURE, EXIT_OK, ask, say
from modes_tui.core.errors import SettingsError
from modes_tui.llm.discovery import (
    DEFAULT_PORTS,
    PORTS_ENV,
    Discovery,
    KeyProvider,
    LocalModel,
    LocalServer,
    discover,
    parse_ports,
)

HEADER = (
    "# written by `modes-tui init`; keys stay in their variables (api_key_env names one)\n"
    "# roles: a profile's `model: fast` or `model: strong` answers with these\n"
)
_PARAMS = re.compile(r"(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


@dataclass
class Proposal:
    """The aliases and roles to write, and why each role got its model."""

    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Alias -> its settings, in the order found."""
    roles: dict[str, str] = field(default_factory=dict)
    """fast and strong -> an alias."""
    reasons: list[str] = field(default_factory=list)
    """One line per role pick."""

    def add(self, wanted: str, body: dict[str, Any], taken: Mapping[str, Any]) -> str:
        """Add `body` under an alias like `wanted` that neither it nor `taken` uses yet; an
        alias of `taken` with the same settings is reused (running init again adds nothing)."""
        for name, theirs in taken.items():
            if (theirs if isinstance(theirs, Mapping) else {"model": theirs}) == body:
                return str(name)
        alias = alias_for(wanted)
        base, number = alias, 2
        while alias in self.models or alias in taken or alias in ("default", "fast", "strong"):
            alias, number = f"{base}-{number}", number + 1
        self.models[alias] = body
        return alias


def alias_for(name: str) -> str:
    """A valid alias from a model name: `llama3.2:latest` -> `llama3.2`, `a/b c` -> `b-c`."""
    name = name.rsplit("/", 1)[-1].removesuffix(":latest")
    alias = re.sub(r"[^A-Za-z0-9_.:-]+", "-", name).strip("-_.:")
    return alias[:40] or "model"


def cmd_init(args: argparse.Namespace) -> int:
    """Find, propose, show, and write on yes."""
    from modes_tui.core.paths import app_dirs

    ports = ports_for(args, os.environ)
    found = discover(os.environ, ports)
    say_found(found, ports)
    if found.empty:
        say(
            "nothing found: set a key variable (e.g. export OPENAI_API_KEY=...), or start "
            "Ollama, LM Studio or llama.cpp's server, then run `modes-tui init` again; "
            "until then the embedded offline model answers"
        )
        return EXIT_FAILURE
    path = app_dirs().settings_file
    existing, old_text = read_existing(path)
    proposal = propose(found, existing.get("models") or {})
    for reason in proposal.reasons:
        say(reason)
    new_text = render(existing, proposal, old_text)
    check_loads(new_text, path)
    return offer(args, path, old_text, new_text)


def ports_for(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, int]:
    """`--ports`, else $MODES_TUI_INIT_PORTS, over the usual ports."""
    if args.ports:
        return parse_ports(args.ports, where="--ports")
    if environ.get(PORTS_ENV):
        return parse_ports(environ[PORTS_ENV], where=PORTS_ENV)
    return dict(DEFAULT_PORTS)


def say_found(found: Discovery, ports: Mapping[str, int]) -> None:
    """What was found, one line per provider or server (names pass the sanitiser in say)."""
    for provider in found.keys:
        say(f"found {provider.name}: {provider.env} is set")
    for server in found.servers:
        names = ", ".join(model.name for model in server.models) or "no models yet"
        more = f" (+{server.skipped} left out: unprintable, too long or too many)"
        say(f"found {server.label}: {names}" + (more if server.skipped else ""))
    for gave_up in found.gave_up:  # ! a server that is there but unusable; refused: none
        say(f"  {gave_up}" if gave_up.refused else f"! {gave_up}; skipped")
    looked = ", ".join(f"{name} :{port}" for name, port in ports.items())
    say(f"(looked for key variables and for servers on 127.0.0.1: {looked})")


def propose(found: Discovery, taken: Mapping[str, Any]) -> Proposal:
    """Aliases for everything found; roles from the first key provider, else local models."""
    proposal = Proposal()
    picks: list[tuple[KeyProvider, str, str]] = []
    for provider in found.keys:
        fast = proposal.add(
            provider.fast, {"model": provider.fast, "api_key_env": provider.env}, taken
        )
        strong = proposal.add(
            provider.strong, {"model": provider.strong, "api_key_env": provider.env}, taken
        )
        picks.append((provider, fast, strong))
    local: list[tuple[LocalServer, LocalModel, str]] = []
    for server in found.servers:
        for model in server.models:
            body: dict[str, Any] = {
                "model": server.litellm_id(model),  # a provider that needs no key variable
                "api_base": server.api_base,
            }
            if model.context is not None:
                body["context_window"] = model.context  # as the server reports it
            body["input_cost_per_token"] = 0  # it runs here: free
            body["output_cost_per_token"] = 0
            local.append((server, model, proposal.add(model.name, body, taken)))
    if picks:
        provider, fast, strong = picks[0]
        proposal.roles = {"fast": fast, "strong": strong}
        proposal.reasons.append(
            f"roles from {provider.name}: fast = {fast} (its small, cheap model), "
            f"strong = {strong} (its large model)"
            + (" (hosted providers first: their large models are stronger)" if local else "")
        )
    elif local:
        proposal.roles, reason = local_roles(local)
        proposal.reasons.append(reason)
    return proposal


def local_roles(
    local: list[tuple[LocalServer, LocalModel, str]],
) -> tuple[dict[str, str], str]:
    """fast = the smallest local model, strong = the largest (by size, else by the `7b` in
    its name); one model is both."""
    ranked = sorted(local, key=lambda item: weight(item[1]))
    small, large = ranked[0], ranked[-1]
    measured = weight(small[1]) != weight(large[1])
    how = "by size" if small[1].size is not None and measured else "by the parameters in its name"
    if not measured:
        reason = f"roles: fast = strong = {small[2]} (no local model is known to be larger)"
    else:
        reason = (
            f"roles: fast = {small[2]} (the smallest local model, {how}), "
            f"strong = {large[2]} (the largest)"
        )
    return {"fast": small[2], "strong": large[2]}, reason


def weight(model: LocalModel) -> float:
    """How large a model is: its size in bytes, else billions of parameters in its name."""
    if model.size is not None:
        return float(model.size)
    found = _PARAMS.findall(model.name)
    return float(found[-1]) * 1e9 if found else 0.0


def read_existing(path: Path) -> tuple[dict[str, Any], str | None]:
    """The user's config.yaml as a mapping, and its text (None: there is none)."""
    from modes_tui.core.errors import FileReadError
    from modes_tui.core.files import read_text
    from modes_tui.core.yaml_files import load_yaml, yaml_refusal

    try:
        text = read_text(path, "settings")
    except FileNotFoundError:
        return {}, None
    except FileReadError as error:
        raise SettingsError(f"settings file {error}") from error
    try:
        data = load_yaml(text)
    except Exception as error:  # noqa: BLE001 - any parse failure means: fix it first
        raise SettingsError(yaml_refusal(path, error)) from None
    if data is None:
        return {}, text
    if not isinstance(data, dict):
        raise SettingsError(
            f"{path}: not a mapping of settings; fix or move it, then run init again"
        )
    return data, text


def render(existing: Mapping[str, Any], proposal: Proposal, old_text: str | None) -> str:
    """The user's settings with the proposal merged in: their aliases, other roles and
    default model kept, ours added, `fast`/`strong` set (the default model: fast, if unset);
    their file's lines and comments kept where they can be (`cli.init_yaml`)."""
    from modes_tui.cli.init_yaml import dump, merged_text

    merged = dict(existing)
    if "fast" in proposal.roles:
        merged.setdefault("default_model", proposal.roles["fast"])  # theirs stays
    merged["models"] = {**(existing.get("models") or {}), **proposal.models}
    merged["roles"] = {**(existing.get("roles") or {}), **proposal.roles}
    if old_text is None or not existing:
        return HEADER + dump(merged)
    return merged_text(old_text, merged, proposal.models, HEADER)


def check_loads(text: str, path: Path) -> None:
    """Refuse to propose a file that would not load (a SettingsError says why)."""
    from modes_tui.core.config.models import ModelCatalog, check_roles, parse_models, parse_roles
    from modes_tui.core.yaml_files import load_yaml

    data = load_yaml(text)
    where = f"{path} (proposed)"
    models = parse_models(data.get("models"), where=where)
    roles = parse_roles(data.get("roles"), where=where)
    check_roles(ModelCatalog(models, str(data.get("default_model") or "default"), roles, where))


def offer(args: argparse.Namespace, path: Path, old_text: str | None, new_text: str) -> int:
    """Show the file (or the diff), then write it on --yes or a yes at a terminal."""
    if old_text is None:
        say(f"\n{path} would be:\n")
        say(new_text)
    elif old_text == new_text:
        say(f"{path} already says this; nothing to write")
        return EXIT_OK
    else:
        say(f"\n{path} exists; the changes:\n")
        diff = difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (proposed)",
        )
        say("".join(diff))
    if args.print:
        return EXIT_OK
    if not args.yes:
        if not sys.stdin.isatty():
            say("not written (no terminal to ask): run `modes-tui init --yes` to write it")
            return EXIT_FAILURE
        if ask(f"Write {path}? [y/N] ").strip().lower() not in {"y", "yes"}:
            say("not written")
            return EXIT_OK
    if not write(path, old_text, new_text):
        say(
            f"not written: {path} changed while init ran (another writer); run "
            "`modes-tui init` again to see the changes against it"
        )
        return EXIT_FAILURE
    say(f"wrote {path}; `modes-tui models --check` tries each model once")
    return EXIT_OK


def write(path: Path, old_text: str | None, text: str) -> bool:
    """Replace `path` with `text` (atomically, 0600, in a private folder) unless it no longer
    holds `old_text`, what the proposal was made from; read and written under the lock
    every writer of config.yaml takes (`core.files.locked`). False: changed meanwhile."""
    from modes_tui.core.files import atomic_write, locked, private_folder

    private_folder(path.parent)
    with locked(path):
        _, now = read_existing(path)
        if now != old_text:
            return False
        atomic_write(path, text.encode("utf-8"), mode=0o600)
    return True
