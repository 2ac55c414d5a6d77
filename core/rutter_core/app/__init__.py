"""The application layer: one pydantic model per operation's params and result, and the
`Rutter` facade every surface calls."""
