"""The Textual app: the only package that imports textual.

The app is `app.ModesApp` (start-up, screens, global keys); the conversation is the screen
`conversation.ConversationScreen`; what the app needs from the rest of modes-tui is in
`services.py`. Its modules:

    app.py              The modes-tui app: start-up, screens and global keys
    arming.py           A dialog that opens on its own needs a deliberate answer: arming
    chat.py             The chat log: one view per user turn, drawn from the bottom up
    compaction_note.py  The folded note that says older turns were summarised for the model
    conversation.py     The conversation: the screen the app opens with, chat on the left,
                        routing decisions on the right, a prompt below
    conversation_commands.py
                        What the conversation's slash commands do that is not a turn
    confirm.py          Asking the user before a tool runs: the dialog and the `Confirmer` the
                        engine calls
    correct.py          The correction picker: which mode should have answered this turn?
    doubt.py            The doubt dialog: the router is unsure, so the user picks the mode
                        before the turn runs
    early_prompt.py     The prompt of the first frame: it keeps what is typed until the editor,
                        mounted right after that frame, takes it
    focus.py            Moving around by keyboard: Tab walks the conversation's parts, and a
                        character typed away from the prompt is typed into it
    footer.py           The footer: the keys that fit, each shown whole
    gc_tuning.py        Keeping the garbage collector off the first frame and off the streaming
                        screen
    help.py             The help overlay: every key and command over the conversation, never
                        in it
    inspector.py        The inspector: the exact request of one turn beside its response and
                        usage
    keymap_check.py     What is wrong with a `keymap:` setting: unknown ids, keys never
                        reported, keys taken from a mode
    keys.py             Which key forces which mode, and the ids users rebind in `keymap:`
    markdown_lists.py   Markdown lists with one widget per item
    palette.py          Command palette entries: "Force mode: X" for each mode, auto and off,
                        and every action of the chat screen
    panel.py            The route panel: every routing decision of the session, newest first
    parts.py            What the conversation's helpers see of it: its parts on screen and its
                        state; `Part` finds a part once
    pending.py          Type-ahead: messages sent while a turn runs wait here, in order, until
                        they start
    prompt.py           The prompt: a multi-line TextArea where Enter sends, that completes
                        commands as you type and remembers what you sent
    render.py           Rich renderables for routes, tool calls and turn states: how a value
                        looks on screen
    replay.py           Replaying a recorded session through the live widgets, and picking one
                        to replay
    services.py         What the app needs from the rest of modes-tui, as protocols the CLI and
                        the tests fill in
    session_actions.py  `/resume`, `/fork` and `/rename` in the app: switching the session being
                        recorded
    sessions.py         Recorded sessions for the app: the store's logs, replay and re-route, as
                        the screens need them
    startup.py          Starting up: how far the slow work is (`LoadProgress`, for the status
                        line's bar), and why modes-tui could not start, said whole and with the
                        file to fix (`StartupProblem`)
    status.py           The header (active mode, control setting, model, warnings) and the
                        status line (progress)
    stream_fit.py       Widgets in a `layout: stream` container measured at the width they are
                        drawn at
    turn_messages.py    Messages a drawn turn sends up to the app
    turn_runner.py      Running one turn on screen: the record, its view in the chat, and the
                        engine's events said by the panel, the header and the status line
    turn_view.py        One turn in full: the user's message, the route, the streamed Markdown
                        answer, tool calls, folded reasoning, and how the turn ended
    messages.py         What the app's workers report: one typed message per result, each
                        handled by the app with `@on(...)`
    turn_queue.py       The turn queue: whether a turn runs, which sent messages wait for it,
                        which sent message is back in the prompt to be edited, and the rules
                        between the three
"""
