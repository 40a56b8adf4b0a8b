"""`modes-tui acp`: the engine as an Agent Client Protocol agent, for editors.

The edge that speaks ACP on stdin/stdout; the only package that imports the `acp` SDK.

    server.py          serve: the stdio streams, the connection, the orderly end
    stdio.py           the guarded stdout and the line transport that answers bad lines
    agent.py           ModesAgent: the protocol's methods, one engine per session
    session.py         AcpSession: a session's engine, mode setting, log; runs and replays turns
    updates.py         turn events -> session updates (mode update and route note first)
    permissions.py     PermissionAsker: the engine's Confirmer and Asker over request_permission
    prompt_text.py     a prompt's content blocks -> the user message (and its size limit)
    editor_servers.py  the editor's MCP servers, offered to the modes that use tools
"""
