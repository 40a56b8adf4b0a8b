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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from modes_tui.core.config.settings import SettingReader, is_scalar
from modes_tui.core.errors import cut_repr

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
    top = SettingReader(where, fix=fix)
    entries = top.mapping("mcp_servers", value, "a mapping of server name to settings")
    servers: dict[str, McpServer] = {}
    for name, entry in entries.items():
        if not isinstance(name, str) or not SERVER_NAME.match(name):
            raise top.problem(
                "mcp_servers",
                f"{cut_repr(name)} is not a valid server name (lowercase letters, "
                "digits, - or _, starting with a letter)",
            )
        servers[name] = _server(name, entry, top.child(f"mcp_servers.{name}"))
    return servers


def _server(name: str, entry: Any, fields: SettingReader) -> McpServer:
    if not isinstance(entry, Mapping):
        raise fields.wrong(
            "", "a mapping with `command:` (stdio) or `url:` (streamable HTTP)", entry
        )
    fields.unknown_keys(entry, SERVER_KEYS, f"use {', '.join(sorted(SERVER_KEYS))}")
    if ("command" in entry) == ("url" in entry):
        raise fields.error(
            "",
            " needs exactly one of `command:` (a program to run over stdio) "
            "or `url:` (a streamable HTTP endpoint)",
        )
    common = McpServer(
        name=name,
        transport="stdio",
        trust=fields.flag("trust", entry.get("trust", False)),
        start_timeout=fields.number(
            "start_timeout",
            entry.get("start_timeout", DEFAULT_START_TIMEOUT),
            "a positive number of seconds",
            0,
            above=True,
        ),
    )
    if "url" in entry:
        return _http_server(common, entry, fields)
    return _stdio_server(common, entry, fields)


def _http_server(common: McpServer, entry: Mapping[str, Any], fields: SettingReader) -> McpServer:
    misplaced = sorted(k for k in entry if k in STDIO_KEYS)
    if misplaced:
        raise fields.error(
            misplaced[0], " is for stdio servers (`command:`), not for a `url:` server; remove it"
        )
    url = entry["url"]
    if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url.strip()):
        raise fields.wrong("url", "an http:// or https:// URL", url)
    headers = fields.text_map("headers", entry.get("headers"), "a mapping of names to text")
    return replace(common, transport="http", url=url.strip(), headers=headers)


def _stdio_server(common: McpServer, entry: Mapping[str, Any], fields: SettingReader) -> McpServer:
    misplaced = sorted(k for k in entry if k in HTTP_KEYS)
    if misplaced:
        raise fields.error(
            misplaced[0], " is for `url:` servers, not for a `command:` server; remove it"
        )
    command = fields.text("command", entry["command"], "the program to run, as text")
    args = entry.get("args", [])
    if not isinstance(args, list):
        raise fields.wrong("args", "a list of arguments", args)
    for index, arg in enumerate(args):
        if not is_scalar(arg):
            raise fields.wrong(f"args[{index}]", "text or a number", arg)
    cwd = entry.get("cwd")
    if cwd is not None:
        cwd = Path(fields.text("cwd", cwd, "a directory path")).expanduser()
    return replace(
        common,
        command=command,
        args=tuple(str(arg) for arg in args),
        env=fields.text_map("env", entry.get("env"), "a mapping of names to text"),
        cwd=cwd,
    )
