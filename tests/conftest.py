"""Shared fixtures: every test gets its own MODES_TUI_HOME, and packs are cheap to write."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

# litellm reaches for the network at import unless told otherwise; tests never may.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Bytecode is written (this machine's environment sets PYTHONDONTWRITEBYTECODE): otherwise, on
# a fresh checkout, each of the suite's few hundred `modes-tui` subprocesses compiles our
# modules from source again (0.1-0.2 s of CPU each, measured), and each worker does too.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

REPO = Path(__file__).resolve().parent.parent

# `.venv/bin/pytest` runs the suite on pytest-xdist workers (`-n 3 --dist loadgroup`, pyproject).
# A group's tests run on one worker, one after another, and never beside each other: the real
# llama_cpp.server tests (a server of ~1 GB each, started per module), the quality checks (ruff
# and two mypy runs over the checkout), and each module whose module-scoped fixture loads a model
# or starts a server (built once per worker that runs the module, so keep the module on one).
# Paths are relative to tests/; a new test file needs an entry only if it is one of these.
XDIST_GROUPS = {
    "llm/test_real_server.py": "llama-server",
    "llm/test_real_server_context.py": "llama-server",
    "test_quality.py": "quality",
    "test_bad_input.py": "bad-input",
    "llm/test_local_encoder.py": "local-encoder",
    "llm/test_local_model.py": "local-model",
    "llm/test_mode_note.py": "mode-note",
}
FIRST_GROUPS = ("llama-server",)
"""Started first, so the longest group (about 6.5 minutes alone) is not the run's tail."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the grouped modules (see XDIST_GROUPS) and move the FIRST_GROUPS to the front."""
    tests = Path(__file__).resolve().parent
    for item in items:
        relative = item.path.resolve().relative_to(tests).as_posix()
        group = XDIST_GROUPS.get(relative)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: not _in_first_group(item))


def _in_first_group(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("xdist_group")
    return marker is not None and bool(marker.args) and marker.args[0] in FIRST_GROUPS


@pytest.fixture(autouse=True)
def modes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private MODES_TUI_HOME for each test, so nothing touches the real config."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MODES_TUI_HOME", str(home))
    yield home
    from modes_tui.core.redaction import forget_secrets

    forget_secrets()  # secret values registered by one test are not another's


PackWriter = Callable[..., Path]


@pytest.fixture
def write_pack(tmp_path: Path) -> PackWriter:
    """Write a pack folder from dicts: write_pack(router={...}, modes={"a": {...}})."""

    def write(
        router: dict[str, Any] | None = None,
        modes: dict[str, dict[str, Any] | str] | None = None,
        prompts: dict[str, str] | None = None,
        name: str = "testpack",
    ) -> Path:
        folder = tmp_path / "packs" / name
        folder.mkdir(parents=True, exist_ok=True)
        router = {"classifier": "keyword", "fallback": "chat"} if router is None else router
        (folder / "router.yaml").write_text(yaml.safe_dump(router), encoding="utf-8")
        if modes is None:
            modes = {
                "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
                "code": {"description": "Code questions.", "keywords": ["segfault", "python"]},
            }
        for mode, data in modes.items():
            text = data if isinstance(data, str) else yaml.safe_dump(data)
            (folder / f"{mode}.yaml").write_text(text, encoding="utf-8")
        for relative, text in (prompts or {}).items():
            path = folder / "prompts" / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return folder

    return write


@pytest.fixture
def fake_llm() -> Iterator[Any]:
    """A scripted litellm custom provider answering every `fake/...` model."""
    from modes_tui.llm.litellm_import import import_litellm
    from tests.support.fake_provider import FakeProvider, install

    provider = FakeProvider()
    previous = install(provider)
    yield provider
    import_litellm().custom_provider_map = previous
