"""rutter's Model Context Protocol server (`rutter mcp`, contract section 14): the tools an
agent calls, over the app facade, as actor `mcp`."""
