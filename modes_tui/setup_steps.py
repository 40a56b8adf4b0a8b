"""The steps of a setup, run one after the other with a progress display: which step of how
many, and for a long one (the llama.cpp build) the elapsed time. Each command's output goes
to a log; a failure names the step and shows the log's end. Standard library only, like
`modes_tui.setup_local`, which makes the steps.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO


class SetupError(Exception):
    """A step failed; the message says which, and what to do."""

    def __init__(self, message: str, step: Step | None = None) -> None:
        super().__init__(message)
        self.step = step


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the setup does: a command, and for the build the move of its result."""

    label: str
    """What the user reads in the progress display, e.g. `building llama-cpp-python`."""
    argv: tuple[str, ...] = ()
    """The command."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables set for the command on top of the environment (CMAKE_ARGS ...)."""
    long: bool = False
    """Show the elapsed time while it runs (the llama.cpp build)."""
    publish: tuple[Path, Path] | None = None
    """Move the first folder to the second once the command succeeded (whole or not at all)."""

    def shell(self) -> str:
        """The command as a shell line, with its variables first."""
        words = [f"{name}={shlex.quote(value)}" for name, value in self.env.items()]
        return " ".join(words + [shlex.quote(word) for word in self.argv])


Clock = Callable[[], float]


@dataclass
class Progress:
    """The progress display: `[2/5] building ...`, and for long steps the elapsed time
    (one line updated in place on a terminal, a line a minute otherwise)."""

    out: TextIO
    total: int
    clock: Clock = time.monotonic
    _shown: float = 0.0

    def start(self, number: int, step: Step) -> None:
        self.out.write(f"[{number}/{self.total}] {step.label}\n")
        self.out.flush()
        self._shown = self.clock()

    def tick(self, started: float) -> None:
        now = self.clock()
        elapsed = _minutes(now - started)
        if self.out.isatty():
            self.out.write(f"\r      elapsed {elapsed}")
        elif now - self._shown >= 60:
            self.out.write(f"      elapsed {elapsed}\n")
            self._shown = now
        else:
            return
        self.out.flush()

    def done(self, started: float, step: Step) -> None:
        if step.long and self.out.isatty():
            self.out.write(f"\r      done in {_minutes(self.clock() - started)}\n")
            self.out.flush()


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def run_step(step: Step, progress: Progress, log: Path) -> None:
    """Run one step's command, its output into `log`; a failure names the step and the log."""
    started = progress.clock()
    if step.publish is not None:
        shutil.rmtree(step.publish[0], ignore_errors=True)
    with log.open("ab") as sink:
        sink.write(f"\n$ {step.shell()}\n".encode())
        sink.flush()
        child = subprocess.Popen(
            step.argv, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **step.env}
        )
        while True:
            try:
                code = child.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                if step.long:
                    progress.tick(started)
            except KeyboardInterrupt:
                child.terminate()
                child.wait()
                raise
    progress.done(started, step)
    if code != 0:
        raise SetupError(
            f"{step.label} failed (exit {code}); its output: {log}\n{_tail(log)}", step
        )
    if step.publish is not None:
        partial, folder = step.publish
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)


def _tail(log: Path, lines: int = 15) -> str:
    text = log.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()
    return "\n".join("  " + line for line in text[-lines:])
