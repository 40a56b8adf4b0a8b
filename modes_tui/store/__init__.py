"""Files on disk: the control file, settings, runtime state, session logs and replay.

    control.py    <config>/state.json: read before every turn, written atomically, watched
    settings.py   <config>/config.yaml, then MODES_TUI_* variables, then command-line options
    runtime.py    the state dir (input history, caches) and the sweep of week-old files
    sessions.py   the sessions folder: ids, finding one (`latest`, a prefix), listing them
    session_log.py  writing one append-only JSONL log per session (secrets redacted by
                  core/redaction.py), and its summary
    session_reader.py  loading a log back: torn and corrupt lines, schema migrations
    corrections.py  one append-only JSONL file of corrections per pack (the router learns from it)
    replay.py     a loaded session as the engine's event stream and conversation
    reroute.py    today's router over a recorded session, compared with then
    export.py     sessions as Markdown and tables for people
    manage.py     renaming and deleting saved sessions (`modes-tui sessions rename|rm`)
    resume.py     carrying on a saved session: resume it, fork it, rename the one recorded
    checkpoints.py  the file checkpoints a saved session holds, for `/undo` after a resume
    search.py     finding saved sessions by what was said in them (`sessions --search TEXT`)
    session_files.py  the names of a sessions folder's files (the log, the listing, titles)
    titles.py     session titles: made locally from the first user messages, or set by the user

Nothing here imports a UI or a model library.
"""
