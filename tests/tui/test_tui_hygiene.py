"""The app starts without model libraries, and only `modes_tui.tui` imports textual."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODEL_LIBRARIES = ["litellm", "llama_cpp", "torch", "sentence_transformers", "onnxruntime"]


def test_importing_the_app_loads_no_model_library() -> None:
    code = (
        "import json, sys; import modes_tui.tui.app; "
        f"print(json.dumps([m for m in {MODEL_LIBRARIES!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert json.loads(out.stdout) == []


def test_only_the_tui_package_imports_textual() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+textual\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "modes_tui").rglob("*.py")
        if "tui" not in path.relative_to(REPO / "modes_tui").parts[:1]
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
