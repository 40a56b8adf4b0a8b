"""scripts/setup builds llama-cpp-python for a CPU family, never for the build machine.

The flags come from /proc/cpuinfo: AVX, AVX2, FMA and F16C where the CPU has them, never
AVX-512 or AMX, always GGML_NATIVE=OFF (a native build on a CPU with AMX crashes in
llama.cpp's AMX code). The wheel is cached under a key made of the version, Python and flags.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SETUP = REPO / "scripts" / "setup"

AMX_XEON = (
    "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512bw "
    "avx512vl avx512_bf16 avx512_vnni amx_bf16 amx_tile amx_int8\n"
)
OLD_CPU = "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx\n"
NO_AVX = "flags\t\t: fpu vme sse sse2\n"

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 flags")


def cmake_args(tmp_path: Path, cpuinfo: str) -> list[str]:
    info = tmp_path / "cpuinfo"
    info.write_text(cpuinfo)
    function = subprocess.run(
        ["sed", "-n", "/^llama_cmake_args() {/,/^}/p", str(SETUP)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert function, "scripts/setup has no llama_cmake_args function"
    done = subprocess.run(
        ["bash", "-c", f"{function}\nllama_cmake_args"],
        capture_output=True,
        text=True,
        env={"MODES_TUI_CPUINFO": str(info), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    return done.stdout.split()


def enabled(args: list[str]) -> set[str]:
    return {a.removeprefix("-DGGML_").removesuffix("=ON") for a in args if a.endswith("=ON")}


def test_a_cpu_with_amx_gets_the_avx2_family_and_nothing_more(tmp_path: Path) -> None:
    args = cmake_args(tmp_path, AMX_XEON)
    assert args[0] == "-DGGML_NATIVE=OFF"
    assert enabled(args) == {"AVX", "AVX2", "FMA", "F16C"}
    for off in ("AVX512", "AMX_TILE", "AMX_INT8", "AMX_BF16"):
        assert f"-DGGML_{off}=OFF" in args


def test_a_cpu_without_avx2_gets_only_what_it_has_and_the_rest_turned_off(
    tmp_path: Path,
) -> None:
    # turned off by name: without GGML_NATIVE, llama.cpp enables AVX..F16C by default
    old = cmake_args(tmp_path, OLD_CPU)
    assert enabled(old) == {"AVX"}
    assert {"-DGGML_AVX2=OFF", "-DGGML_FMA=OFF", "-DGGML_F16C=OFF"} <= set(old)
    bare = cmake_args(tmp_path, NO_AVX)
    assert enabled(bare) == set()
    assert {"-DGGML_NATIVE=OFF", "-DGGML_AVX=OFF", "-DGGML_AVX2=OFF"} <= set(bare)


def test_setup_never_builds_from_pips_cache() -> None:
    text = SETUP.read_text()
    build = next(line for line in text.splitlines() if "wheel --quiet" in line)
    assert "--no-cache-dir" in build and "--no-deps" in build
    # the portable wheel is installed before the extra that requires llama-cpp-python
    assert text.index("install_portable_llama\n") < text.index('install --quiet -e ".[')
