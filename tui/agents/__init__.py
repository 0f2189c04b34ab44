"""ARS inside an agent's loop: the MCP server (``mcp_server``) and the agents'
hook handlers. Each is imported only by the command that runs it, so
``ars recall`` and the hooks' fast paths never load the MCP SDK."""
