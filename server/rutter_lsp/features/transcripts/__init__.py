"""transcript import: an agent's own session transcript into a thread."""

from rutter_lsp.features.transcripts.transcripts import register

__all__ = ["register"]
