"""Concurrent writers of the control file: rounds in which a pack's setting was lost.

    python bench/control_writers.py [--rounds 20] [--hog] [--repo PATH]

Each round starts four `python -m modes_tui mode X --pack P` at once, for four packs, and
then reads state.json: a round in which any pack lacks the setting its writer wrote lost an
update. `--hog` runs two busy-looping processes meanwhile (a loaded machine widens the window
between a writer's read and its rename). `--repo` measures another checkout (e.g. an older
main) with this script. Prints one line per run; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PACKS = ("alpha", "beta", "gamma", "delta")
REPO = Path(__file__).resolve().parent.parent


def lost_rounds(repo: Path, rounds: int) -> int:
    """How many of `rounds` rounds lost at least one pack's setting."""
    home = Path(tempfile.mkdtemp(prefix="control-writers-"))
    env = {**os.environ, "MODES_TUI_HOME": str(home), "PYTHONPATH": str(repo)}
    lost = 0
    for number in range(rounds):
        wanted = {pack: ("off", "auto")[(number + i) % 2] for i, pack in enumerate(PACKS)}
        writers = [
            subprocess.Popen(
                [sys.executable, "-m", "modes_tui", "mode", mode, "--pack", pack],
                env=env,
                cwd=repo,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for pack, mode in wanted.items()
        ]
        for writer in writers:
            writer.wait(timeout=120)
        packs = json.loads((home / "config" / "state.json").read_text()).get("packs")
        lost += packs != wanted
    return lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--hog", action="store_true", help="two busy loops meanwhile")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure")
    args = parser.parse_args()
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(2 if args.hog else 0)
    ]
    try:
        lost = lost_rounds(args.repo, args.rounds)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    load = "with a CPU hog" if args.hog else "idle"
    print(f"{args.repo} ({load}): lost updates in {lost} of {args.rounds} rounds")


if __name__ == "__main__":
    main()
