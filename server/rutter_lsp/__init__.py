"""rutter's language server: a thin adapter over rutter_core (the CLI is `rutter_cli`)."""

__version__ = "0.1.0"
