"""Agent tools over the Model Context Protocol (``cortex mcp --agent A``): ``tools`` declares
them, ``gateway`` is their only way to Cortex (the APIs and the feedback stream of one
agent), ``server`` puts them on the official MCP SDK over stdio or streamable HTTP."""
