"""Compaction of a thread (docs/reference/continuity.md): `model` (the documents and bounds),
`repo` (the only module touching the `compactions` table), `summarizers` (what turns the older
messages into a summary: `extractive` and `command`), `endpoints` (the model summarizers:
`openai` and `anthropic`), `service` (the operation: start, finish,
fail, resolve, and the thread's latest summary)."""
