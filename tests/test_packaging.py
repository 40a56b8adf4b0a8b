"""A wheel built from the repository carries the shipped packs and prompts."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_a_non_editable_install_finds_the_shipped_packs(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(REPO),
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("modes_tui-*.whl"))
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    code = (
        "from modes_tui.core.packs.profiles import load_pack; "
        "p = load_pack('support'); print(p.path); print(p.prompts.system.origin); "
        "print(' '.join(t.name for t in p.make_tools()))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "PYTHONPATH": str(site),
            "MODES_TUI_HOME": str(tmp_path / "home"),
            "PATH": "/usr/bin:/bin",
        },
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    pack_path, system_origin, tools = ran.stdout.splitlines()  # a path may hold spaces
    assert pack_path.startswith(str(site / "modes_tui" / "_shipped" / "profiles"))
    assert system_origin.startswith(str(site / "modes_tui" / "_shipped" / "prompts"))
    # the store ships as the pack's own tools module (tools.py and its seed.py)
    assert tools == "find_order list_orders track_shipment create_return create_ticket"
