"""Importing agents' own session transcripts into threads (issue 15, docs/reference/transcripts.md).

- `records`: the neutral records (entries, skip and omit reasons) every parser returns.
- `claude_code`, `codex`: one pure parser per agent, a JSON line in, a `LineOutcome` out; each
  module's docstring says what of the agent's format it encodes, from which source and date.
- `jsonl`, `reading`: JSON Lines cut and decoded incrementally (whole files and `--watch`).
- `prepare`: text made storable (plain, redacted, bounded with a marker, never refused).
- `source`: the file, opened safely (the only I/O here).
- `service`, `repo`: the thread that holds a transcript and its new messages, in the caller's
  transaction.
"""
