"""context assembly: what a run's agent is given, and the stored audit of each assembly."""

from rutter_lsp.features.assembly.assembly import register

__all__ = ["register"]
