"""The core stays headless: importing it loads no UI and no model library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_support import run_python

REPO = Path(__file__).resolve().parent.parent

HEAVY = [
    "textual",
    "prompt_toolkit",
    "litellm",
    "llama_cpp",
    "torch",
    "sentence_transformers",
    "onnxruntime",  # the encoder's layers load with the encoder, in the background
    "mcp",  # the MCP SDK loads on a mode's first turn that needs a server, never before
    "acp",  # the ACP SDK loads for `modes-tui acp` only
]

CORE_MODULES = [
    "modes_tui.core",
    "modes_tui.core.packs.profiles",
    "modes_tui.core.routing.router",
    "modes_tui.core.routing.prompt",
    "modes_tui.core.terminal_text",
    "modes_tui.core.engine.mode_note",
    "modes_tui.core.history.events",
    "modes_tui.core.engine",
    "modes_tui.core.engine.engine",
    "modes_tui.core.tools.registry",
    "modes_tui.core.engine.guards",
    "modes_tui.core.tools.workspace",
    "modes_tui.core.tools.toolbox",
    "modes_tui.core.packs.tools",
    "modes_tui.core.packs.fields",
    "modes_tui.core.config.settings",
    "modes_tui.core.packs.router_config",
    "modes_tui.core.routing.input",
    "modes_tui.core.evals.cases",
    "modes_tui.core.evals.report",
    "modes_tui.core.routing.classifiers",
    "modes_tui.core.routing.classifiers.keyword",
    "modes_tui.core.routing.classifiers.embedding",
    "modes_tui.core.routing.classifiers.mode_index",
    "modes_tui.core.routing.classifiers.chat",
    "modes_tui.core.routing.classifiers.judge",
    "modes_tui.core.routing.classifiers.cascade",
    "modes_tui.core.evals.scoring",
    "modes_tui.core.tools.servers",
    "modes_tui.mcp.config",
    "modes_tui.mcp.servers",
    "modes_tui.store.settings",
    "modes_tui.llm.encoders",
    "modes_tui.llm.router_backends",
    "modes_tui.llm.litellm_model",  # litellm itself loads at the first call, not at import
    "modes_tui.llm.litellm_import",
    "modes_tui.llm.provider_errors",
    "modes_tui.llm.fake",
    "modes_tui.llm.gguf",
    "modes_tui.llm.transcript",
    "modes_tui.llm.llama_runner",
    "modes_tui.llm.model_process",
    "modes_tui.llm.model_child",
    "modes_tui.core.engine.ports",
    "modes_tui.core.model.ports",
    "modes_tui.core.model.wire",
    "modes_tui.core.redaction",
    "modes_tui.cli",
]


def loaded_after_import(module: str) -> list[str]:
    code = (
        f"import json, sys, importlib; importlib.import_module({module!r}); "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return list(json.loads(out.stdout))


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_loads_no_ui_or_model_library(module: str) -> None:
    assert loaded_after_import(module) == []


def heavy_loaded_after(statements: str, home: Path, **env: str) -> tuple[str, list[str]]:
    """Run `statements` in a fresh interpreter with its own home; its output and the heavy
    libraries it loaded."""
    code = (
        f"import json, sys; {statements}; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = run_python(code, env={"MODES_TUI_HOME": str(home), "PATH": "/usr/bin:/bin", **env})
    return out, json.loads(out.strip().splitlines()[-1])


def test_routing_a_message_from_the_cli_loads_no_model_library(tmp_path: Path) -> None:
    _, loaded = heavy_loaded_after(
        "from modes_tui.cli import main; "
        "main(['route', '--classifier', 'keyword', 'my build fails with a segfault'])",
        tmp_path,
    )
    assert loaded == []


def test_building_a_chat_runtime_and_its_engine_loads_no_ui_or_model_library(
    tmp_path: Path,
) -> None:
    _, loaded = heavy_loaded_after(
        "from modes_tui.runtime import RunOptions, Runtime; "
        "r = Runtime.for_chat(RunOptions(classifier='keyword')); r.engine(); r.current.close()",
        tmp_path,
    )
    assert loaded == []


@pytest.mark.local
def test_routing_with_the_local_encoder_loads_neither_torch_nor_litellm(tmp_path) -> None:
    output, loaded = heavy_loaded_after(
        "from modes_tui.cli import main; "
        "main(['route', '--classifier', 'embedding', 'my build fails with a segfault'])",
        tmp_path,
        HF_HUB_OFFLINE="1",
    )
    assert output.startswith("code  (by classifier")
    assert loaded == ["onnxruntime"]  # the encoder's layers, and nothing heavier
