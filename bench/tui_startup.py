"""Time to first paint: `modes-tui` against a bare Textual app with one Input, same run.

Each start is a fresh process in a pseudo-terminal (140x45), so interpreter start-up,
imports and the first frame all count. The clock starts just before the process is
spawned and stops when the app's first frame has been drawn (the first refresh after
mount; for modes-tui, before the work it starts after that frame, such as reading the
pack and settings in a thread). The app then exits at once. Also reported: whether litellm, llama_cpp or torch
were already imported at that moment (they must not be), and the CPU time the process had
used by then: on a machine other work keeps busy, wall times swing with the load while
CPU times barely move, so the CPU ratio tells whether a change helped.

The first (discarded) start of each writes bytecode, as an installed package has.

Target (issue 14): modes-tui <= 1.3x the bare app. Never asserts.
Run: `PYTHONPATH=. python bench/tui_startup.py [--repeat 7]`.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("litellm", "llama_cpp", "torch", "sentence_transformers")

# The child's side: patch the app's on_mount to note the first frame, then exit.
CHILD = r"""
import json, os, sys, time

def report(app_kind):
    out = os.environ["BENCH_OUT"]
    heavy = [m for m in HEAVY_LIST if m in sys.modules]
    with open(out, "w") as handle:
        json.dump({"painted": time.time(), "cpu": time.process_time(), "heavy": heavy}, handle)
    os._exit(0)

kind = sys.argv[1]
if kind == "bare":
    from textual.app import App
    from textual.widgets import Input

    class Bare(App):
        def compose(self):
            yield Input(placeholder="Ask anything")

        def on_mount(self):
            self.call_after_refresh(report, "bare")

    Bare().run()
else:
    from modes_tui.tui import app as tui_app

    original = tui_app.ModesApp.on_mount

    def on_mount(self):
        # Registered first, so it runs right after the first frame, before the work the
        # app itself schedules for after its first frame (as the bare app has none).
        self.call_after_refresh(report, "modes-tui")
        original(self)

    tui_app.ModesApp.on_mount = on_mount
    from modes_tui.cli import main

    main([])
""".replace("HEAVY_LIST", repr(HEAVY))


def start(kind: str, home: Path) -> tuple[float, float, list[str]]:
    """Seconds from spawn to first paint, CPU seconds used by then, and the heavy modules
    loaded by then."""
    out = home / f"{kind}.json"
    out.unlink(missing_ok=True)
    master, slave = pty.openpty()
    import fcntl
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 140, 0, 0))
    env = {
        # An installed package has bytecode; without it our modules would be compiled
        # from source at every start and the bare app (all bytecode) would look faster.
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "BENCH_OUT": str(out),
        "MODES_TUI_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLUMNS": "140",
        "LINES": "45",
    }
    began = time.time()
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, kind],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=REPO,
        close_fds=True,
    )
    os.close(slave)
    deadline = time.time() + 60
    while process.poll() is None and time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                os.read(master, 65536)  # drain the terminal so the app never blocks
            except OSError:
                break
    if process.poll() is None:
        process.kill()
    os.close(master)
    data = json.loads(out.read_text())
    return data["painted"] - began, data["cpu"], list(data["heavy"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="modes-bench-"))
    times: dict[str, list[float]] = {"bare": [], "modes-tui": []}
    cpu: dict[str, list[float]] = {"bare": [], "modes-tui": []}
    heavy: set[str] = set()
    start("bare", home)  # warm the file cache once for both
    start("modes-tui", home)
    for _ in range(args.repeat):
        for kind in times:
            seconds, used, loaded = start(kind, home)
            times[kind].append(seconds * 1000)
            cpu[kind].append(used * 1000)
            if kind == "modes-tui":
                heavy.update(loaded)
    print(f"Time to first paint, {args.repeat} starts each, interleaved (ms)")
    print()
    print(f"{'app':<34}{'median':>8}{'min':>8}{'max':>8}{'CPU median':>12}")
    labels = {"bare": "bare Textual app, one Input", "modes-tui": "modes-tui (modes-tui, no verb)"}
    for kind, values in times.items():
        print(
            f"{labels[kind]:<34}{statistics.median(values):>8.0f}{min(values):>8.0f}"
            f"{max(values):>8.0f}{statistics.median(cpu[kind]):>12.0f}"
        )
    ratio = statistics.median(times["modes-tui"]) / statistics.median(times["bare"])
    cpu_ratio = statistics.median(cpu["modes-tui"]) / statistics.median(cpu["bare"])
    print()
    print(f"ratio modes-tui / bare: {ratio:.2f}x (target <= 1.3x); CPU time: {cpu_ratio:.2f}x")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores here)")
    print(f"model libraries imported at first paint: {', '.join(sorted(heavy)) or 'none'}")


if __name__ == "__main__":
    main()
