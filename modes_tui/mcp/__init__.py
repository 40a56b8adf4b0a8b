"""MCP: tools from Model Context Protocol servers, offered to the modes that list them.

    config.py    the `mcp_servers:` setting: one validated `McpServer` per entry (no SDK import)
    servers.py   the running servers, through the official `mcp` SDK: started on first use,
                 their tools turned into core `Tool`s, stopped at exit

The core never imports this package or the SDK: it sees the servers only through the
`ToolServers` protocol (`modes_tui.core.tools.servers`) and their tools as ordinary `Tool`s.
"""
