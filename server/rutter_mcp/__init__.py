"""rutter's Model Context Protocol server (`rutter mcp`, docs/reference/surfaces.md): the tools an
agent calls, over the app facade, as actor `mcp`."""
