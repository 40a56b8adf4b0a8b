"""A chat's session: the one `--resume` names, the pack it brings, and the writer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui import __version__

if TYPE_CHECKING:
    from modes_tui.core.paths import Dirs
    from modes_tui.runtime import RunOptions
    from modes_tui.store.resume import CurrentSession, Resumption
    from modes_tui.store.settings import Settings


def resume_for(ref: str | None, dirs: Dirs) -> Resumption | None:
    """The session `--resume` names, read back and checked (None without --resume)."""
    if ref is None:
        return None
    from modes_tui.store.resume import prepare_resume

    return prepare_resume(ref, dirs)


def pack_for(
    options: RunOptions, settings: Settings, resumed: Resumption | None
) -> tuple[str, str | None]:
    """The pack to run, and what to tell the user about it: an explicit --pack wins; a
    resumed session's own pack comes next (when it is installed); then the settings'."""
    from modes_tui.core.packs.profiles import available_packs

    explicit = options.pack or options.profiles
    if resumed is None or resumed.pack is None or explicit or resumed.pack == settings.pack:
        note = resumed.pack_note(settings.pack) if resumed is not None and explicit else None
        return settings.pack, note
    if resumed.pack in available_packs():
        return resumed.pack, (
            f"session {resumed.id} was recorded with pack {resumed.pack!r}; using it "
            "(--pack chooses another)"
        )
    return settings.pack, (
        f"session {resumed.id} was recorded with pack {resumed.pack!r}, which is not "
        f"installed; continuing with {settings.pack!r}"
    )


def current_session(
    dirs: Dirs, *, pack: str, model: str, fsync: bool, version: str = __version__
) -> CurrentSession:
    """The session writer of a chat: a new log at the first record, or a resumed one;
    `version` is the app version its header records."""
    from modes_tui.store.resume import CurrentSession
    from modes_tui.store.session_log import SessionLog

    def create(**extra: Any) -> SessionLog:
        return SessionLog.create(
            dirs,
            pack=pack,
            model=model,
            cwd=str(Path.cwd()),
            app_version=version,
            fsync=fsync,
            **extra,
        )

    return CurrentSession(create, dirs=dirs, fsync=fsync)
