"""The `mcp_servers:` setting: what is accepted, and a clear error for everything else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from modes_tui.core.config.variables import expand_variables
from modes_tui.core.errors import DeclarationError, SettingsError
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.mcp.config import DEFAULT_START_TIMEOUT, McpServer
from modes_tui.store.settings import load_settings


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def write_config(dirs: Dirs, data: object) -> Path:
    dirs.config.mkdir(parents=True, exist_ok=True)
    dirs.settings_file.write_text(yaml.safe_dump({"mcp_servers": data}), encoding="utf-8")
    return dirs.settings_file


def test_stdio_and_http_servers_are_read_with_their_defaults(dirs: Dirs) -> None:
    path = write_config(
        dirs,
        {
            "git": {
                "command": " uvx ",
                "args": ["mcp-server-git", "--repository", ".", 3],
                "env": {"GIT_AUTHOR_NAME": "me", "LEVEL": 2},
                "cwd": "~/src",
                "trust": True,
            },
            "docs": {
                "url": "https://example.com/mcp",
                "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                "start_timeout": 5,
            },
            "time": {"command": "mcp-server-time"},
        },
    )
    settings = load_settings(dirs, env={})
    git, docs, time = (settings.mcp_servers[n] for n in ("git", "docs", "time"))
    assert git == McpServer(
        name="git",
        transport="stdio",
        command="uvx",
        args=("mcp-server-git", "--repository", ".", "3"),
        env={"GIT_AUTHOR_NAME": "me", "LEVEL": "2"},
        cwd=Path("~/src").expanduser(),
        trust=True,
    )
    assert git.describe() == "uvx mcp-server-git --repository . 3"
    assert docs.transport == "http" and docs.url == "https://example.com/mcp"
    assert docs.headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}  # filled in at start
    assert docs.trust is False and docs.start_timeout == 5.0
    assert time.trust is False and time.args == () and time.start_timeout == DEFAULT_START_TIMEOUT
    assert settings.origin("mcp_servers") == str(path)


def test_no_servers_by_default_and_json_from_the_environment(dirs: Dirs) -> None:
    assert load_settings(dirs, env={}).mcp_servers == {}
    settings = load_settings(
        dirs, env={"MODES_TUI_MCP_SERVERS": '{"time": {"command": "mcp-server-time"}}'}
    )
    assert settings.mcp_servers["time"].command == "mcp-server-time"
    assert settings.origin("mcp_servers") == "MODES_TUI_MCP_SERVERS"
    with pytest.raises(
        SettingsError, match=r"^MODES_TUI_MCP_SERVERS: mcp_servers is not valid JSON"
    ):
        load_settings(dirs, env={"MODES_TUI_MCP_SERVERS": "{time: x"})


BAD = [
    (["time"], "mcp_servers must be a mapping of server name to settings, got list"),
    ({"Time": {"command": "x"}}, "mcp_servers: 'Time' is not a valid server name"),
    ({"a.b": {"command": "x"}}, "mcp_servers: 'a.b' is not a valid server name"),
    ({"time": "mcp-server-time"}, "mcp_servers.time must be a mapping with `command:`"),
    ({"time": {}}, "mcp_servers.time needs exactly one of `command:`"),
    ({"time": {"command": "x", "url": "http://h/mcp"}}, "mcp_servers.time needs exactly one of"),
    ({"time": {"command": "x", "colour": 1}}, "mcp_servers.time: unknown key 'colour'; use "),
    ({"time": {"command": ""}}, "mcp_servers.time.command must be the program to run"),
    ({"time": {"command": ["uvx", "x"]}}, "mcp_servers.time.command must be the program to run"),
    ({"time": {"command": "x", "args": "a b"}}, "mcp_servers.time.args must be a list"),
    ({"time": {"command": "x", "args": [{"a": 1}]}}, "mcp_servers.time.args[0] must be text"),
    ({"time": {"command": "x", "env": ["A=1"]}}, "mcp_servers.time.env must be a mapping"),
    ({"time": {"command": "x", "env": {"A": None}}}, "mcp_servers.time.env.A must be text"),
    ({"time": {"command": "x", "cwd": 3}}, "mcp_servers.time.cwd must be a directory path"),
    ({"time": {"command": "x", "trust": "yes"}}, "mcp_servers.time.trust must be true or false"),
    ({"time": {"command": "x", "start_timeout": 0}}, "start_timeout must be a positive number"),
    ({"time": {"command": "x", "headers": {}}}, "mcp_servers.time.headers is for `url:` servers"),
    ({"docs": {"url": "example.com/mcp"}}, "mcp_servers.docs.url must be an http:// or https://"),
    ({"docs": {"url": "http://h/mcp", "args": []}}, "mcp_servers.docs.args is for stdio servers"),
    ({"docs": {"url": "http://h/mcp", "headers": "x"}}, "mcp_servers.docs.headers must be a"),
]


@pytest.mark.parametrize(("value", "expected"), BAD, ids=[e[:40] for _, e in BAD])
def test_a_bad_entry_names_the_file_the_key_and_the_fix(
    dirs: Dirs, value: object, expected: str
) -> None:
    path = write_config(dirs, value)
    with pytest.raises(SettingsError) as caught:
        load_settings(dirs, env={})
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert message.endswith(f"edit {path}")


def test_variables_in_env_and_headers_are_filled_in_or_named_when_unset() -> None:
    assert expand_variables("Bearer ${TOKEN}", {"TOKEN": "t0k"}, where="h") == "Bearer t0k"
    assert expand_variables("no $PLAIN vars", {}, where="h") == "no $PLAIN vars"
    with pytest.raises(SettingsError) as caught:
        expand_variables("${MISSING}", {}, where="mcp_servers.docs.headers.Authorization")
    assert str(caught.value) == (
        "mcp_servers.docs.headers.Authorization uses ${MISSING}, which is not set; "
        "set MISSING or edit it"
    )


def test_a_profile_naming_a_server_that_is_not_configured_is_a_pack_problem(write_pack) -> None:
    folder = write_pack(
        modes={
            "chat": {"description": "Chat.", "mcp": ["time"]},
            "code": {"description": "Code.", "tools": ["read_file"], "mcp": ["git", "time"]},
        }
    )
    pack = load_pack(profiles_dir=folder, known_servers=frozenset({"time", "git"}))
    assert pack.get("code").mcp == ("git", "time")  # type: ignore[union-attr]
    assert pack.get("code").summary()["mcp"] == ["git", "time"]  # type: ignore[union-attr]

    folder = write_pack(
        modes={
            "chat": {"description": "Chat.", "mcp": ["time"]},
            "code": {"description": "Code.", "mcp": ["git", "tiem", 3]},
        },
        name="broken",
    )
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=folder, known_servers=frozenset({"time"}))
    # each problem names where the entry is written (issue 30: line and column)
    problems = [re.sub(r" \(line \d+, column \d+\)$", "", str(p)) for p in caught.value.problems]
    assert all("(line " in str(p) for p in caught.value.problems)
    assert problems == [
        "broken/code.yaml: mcp[2]: 3 must be non-empty text",
        "broken/code.yaml: mcp[0]: no MCP server called 'git' in the settings (configured: "
        "time); add it under mcp_servers in config.yaml or remove it here",
        "broken/code.yaml: mcp[1]: no MCP server called 'tiem' in the settings (configured: "
        "time); add it under mcp_servers in config.yaml or remove it here",
    ]
    # without the settings' names (a library caller) the pack loads, and the engine notes
    # an unconfigured server on the turn instead (tests/mcp/test_mcp_servers.py)
    folder = write_pack(modes={"chat": {"description": "Chat.", "mcp": ["anything"]}}, name="lib")
    assert load_pack(profiles_dir=folder).get("chat").mcp == ("anything",)  # type: ignore[union-attr]
