"""Where modes-tui keeps things: config, state, data, and the shipped packs.

`MODES_TUI_HOME` relocates the config, state and data dirs together (tests always set it);
otherwise platformdirs decides.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

APP_NAME = "modes-tui"
HOME_ENV = "MODES_TUI_HOME"

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


class Dirs(NamedTuple):
    """The three directories modes-tui writes to (a named tuple: this module loads before the
    app's first frame, where a frozen dataclass compiles six methods)."""

    config: Path
    """User configuration: config.yaml, state.json (the control file), user packs."""
    state: Path
    """Runtime state that may be thrown away: input history, caches."""
    data: Path
    """Things worth keeping: session logs, the assembled local model."""

    @property
    def control_file(self) -> Path:
        """The control file other processes write to force a mode."""
        return self.config / "state.json"

    @property
    def settings_file(self) -> Path:
        """The user's settings."""
        return self.config / "config.yaml"

    @property
    def user_profiles(self) -> Path:
        """User packs: `<config>/profiles/<pack>/`."""
        return self.config / "profiles"

    @property
    def user_prompts(self) -> Path:
        """User prompt templates: `<config>/prompts/<pack>/`."""
        return self.config / "prompts"

    @property
    def sessions(self) -> Path:
        """One JSONL file per session."""
        return self.data / "sessions"

    @property
    def corrections(self) -> Path:
        """One JSONL file of corrections per pack."""
        return self.data / "corrections"

    @property
    def cache(self) -> Path:
        """Caches (embeddings and the like), swept when stale."""
        return self.state / "cache"


def app_dirs(home: str | os.PathLike[str] | None = None) -> Dirs:
    """The directories in force: `home`, else `$MODES_TUI_HOME`, else platformdirs."""
    root = home if home is not None else os.environ.get(HOME_ENV)
    if root:
        base = Path(root).expanduser()
        return Dirs(config=base / "config", state=base / "state", data=base / "data")
    import platformdirs

    return Dirs(
        config=Path(platformdirs.user_config_dir(APP_NAME)),
        state=Path(platformdirs.user_state_dir(APP_NAME)),
        data=Path(platformdirs.user_data_dir(APP_NAME)),
    )


def shipped_dir(kind: str) -> Path:
    """The shipped `profiles` or `prompts` folder, in a wheel or in a source checkout."""
    inside_wheel = _PACKAGE_DIR / "_shipped" / kind
    if inside_wheel.is_dir():
        return inside_wheel
    return _PACKAGE_DIR.parent / kind
