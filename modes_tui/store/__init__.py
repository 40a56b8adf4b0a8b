"""Files on disk: the control file, settings, runtime state, session logs and replay.

    control.py    <config>/state.json: read before every turn, written atomically, watched
    settings.py   <config>/config.yaml, then MODES_TUI_* variables, then command-line options
    runtime.py    the state dir (input history, caches) and the sweep of week-old files
    sessions.py   one append-only JSONL log per session: writing (secrets redacted by
                  core/redaction.py), loading, listing, migrating
    corrections.py  one append-only JSONL file of corrections per pack (the router learns from it)
    replay.py     a loaded session as the engine's event stream and conversation; reroute
    export.py     sessions as Markdown and tables for people

Nothing here imports a UI or a model library.
"""
