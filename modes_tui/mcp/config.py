"""The `mcp_servers:` setting: which MCP servers exist, how to reach them, whether to trust them.

    mcp_servers:
      git:                                   # the name profiles list in `mcp: [git]`
        command: uvx                         # stdio: a program and its arguments
        args: [mcp-server-git, --repository, .]
        env: {GIT_AUTHOR_NAME: me}           # added to a minimal inherited environment
        cwd: ~/src/project
        trust: false                         # false (default): every call asks first
      docs:
        url: https://example.com/mcp         # streamable HTTP
        headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
        trust: true

Values of `env` and `headers` may name environment variables as `${NAME}`, so a secret
never has to be written into config.yaml; they are filled in when the server starts.
Every problem is a `SettingsError` naming the file (or variable), the key path and the fix.
Importing this module does not import the `mcp` SDK.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from modes_tui.core.errors import SettingsError, cut_repr
from modes_tui.core.variables import expand_variables  # noqa: F401 - re-exported

SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
"""Server names: they prefix tool names, which providers limit to `[a-zA-Z0-9_-]`."""
STDIO_KEYS = frozenset({"command", "args", "env", "cwd"})
HTTP_KEYS = frozenset({"url", "headers"})
COMMON_KEYS = frozenset({"trust", "start_timeout"})
SERVER_KEYS = STDIO_KEYS | HTTP_KEYS | COMMON_KEYS
DEFAULT_START_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class McpServer:
    """One configured MCP server."""

    name: str
    """The name profiles list and tool names start with."""
    transport: Literal["stdio", "http"]
    """stdio (a subprocess) or streamable HTTP (a URL)."""
    command: str = ""
    """stdio: the program to run."""
    args: tuple[str, ...] = ()
    """stdio: its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """stdio: extra environment variables (values may hold `${NAME}`)."""
    cwd: Path | None = None
    """stdio: the directory it runs in (None: modes-tui's own)."""
    url: str = ""
    """http: the endpoint, e.g. http://127.0.0.1:8000/mcp."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """http: headers sent with every request (values may hold `${NAME}`)."""
    trust: bool = False
    """True: its tools run without asking; False: every call is confirmed first."""
    start_timeout: float = DEFAULT_START_TIMEOUT
    """Seconds the server may take to start and list its tools."""

    def describe(self) -> str:
        """How it is reached, for listings: the command line or the URL."""
        if self.transport == "http":
            return self.url
        return " ".join([self.command, *self.args])


def parse_mcp_servers(value: Any, *, where: str, fix: str) -> dict[str, McpServer]:
    """The `mcp_servers` value as servers by name, or a SettingsError naming the key and the fix."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(
            f"{where}: mcp_servers must be a mapping of server name to settings, "
            f"got {type(value).__name__} {cut_repr(value)}; {fix}"
        )
    servers: dict[str, McpServer] = {}
    for name, entry in value.items():
        if not isinstance(name, str) or not SERVER_NAME.match(name):
            raise SettingsError(
                f"{where}: mcp_servers: {cut_repr(name)} is not a valid server name (lowercase letters, "
                f"digits, - or _, starting with a letter); {fix}"
            )
        servers[name] = _server(name, entry, where=where, fix=fix)
    return servers


def _server(name: str, entry: Any, *, where: str, fix: str) -> McpServer:
    key = f"mcp_servers.{name}"

    def wrong(sub: str, expected: str, got: Any) -> SettingsError:
        return SettingsError(
            f"{where}: {key}.{sub} must be {expected}, got {type(got).__name__} {cut_repr(got)}; {fix}"
        )

    if not isinstance(entry, Mapping):
        raise SettingsError(
            f"{where}: {key} must be a mapping with `command:` (stdio) or `url:` (streamable "
            f"HTTP), got {type(entry).__name__} {cut_repr(entry)}; {fix}"
        )
    unknown = sorted(str(k) for k in entry if k not in SERVER_KEYS)
    if unknown:
        raise SettingsError(
            f"{where}: {key}: unknown key{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(cut_repr, unknown))}; use {', '.join(sorted(SERVER_KEYS))}; {fix}"
        )
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise SettingsError(
            f"{where}: {key} needs exactly one of `command:` (a program to run over stdio) "
            f"or `url:` (a streamable HTTP endpoint); {fix}"
        )
    trust = entry.get("trust", False)
    if not isinstance(trust, bool):
        raise wrong("trust", "true or false", trust)
    timeout = entry.get("start_timeout", DEFAULT_START_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise wrong("start_timeout", "a positive number of seconds", timeout)

    if has_url:
        misplaced = sorted(k for k in entry if k in STDIO_KEYS)
        if misplaced:
            raise SettingsError(
                f"{where}: {key}.{misplaced[0]} is for stdio servers (`command:`), not for a "
                f"`url:` server; remove it; {fix}"
            )
        url = entry["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url.strip()):
            raise wrong("url", "an http:// or https:// URL", url)
        return McpServer(
            name=name,
            transport="http",
            url=url.strip(),
            headers=_text_map(entry.get("headers"), f"{key}.headers", where=where, fix=fix),
            trust=trust,
            start_timeout=float(timeout),
        )

    misplaced = sorted(k for k in entry if k in HTTP_KEYS)
    if misplaced:
        raise SettingsError(
            f"{where}: {key}.{misplaced[0]} is for `url:` servers, not for a `command:` server; "
            f"remove it; {fix}"
        )
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise wrong("command", "the program to run, as text", command)
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise wrong("args", "a list of arguments", args)
    for index, arg in enumerate(args):
        if isinstance(arg, bool) or not isinstance(arg, str | int | float):
            raise wrong(f"args[{index}]", "text or a number", arg)
    cwd = entry.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd.strip()):
        raise wrong("cwd", "a directory path", cwd)
    return McpServer(
        name=name,
        transport="stdio",
        command=command.strip(),
        args=tuple(str(arg) for arg in args),
        env=_text_map(entry.get("env"), f"{key}.env", where=where, fix=fix),
        cwd=Path(cwd.strip()).expanduser() if isinstance(cwd, str) else None,
        trust=trust,
        start_timeout=float(timeout),
    )


def _text_map(value: Any, key: str, *, where: str, fix: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SettingsError(
            f"{where}: {key} must be a mapping of names to text, got "
            f"{type(value).__name__} {cut_repr(value)}; {fix}"
        )
    result: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not name:
            raise SettingsError(f"{where}: {key}: {cut_repr(name)} is not a valid name; {fix}")
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise SettingsError(
                f"{where}: {key}.{name} must be text, got {type(item).__name__} {cut_repr(item)}; {fix}"
            )
        result[name] = str(item)
    return result
