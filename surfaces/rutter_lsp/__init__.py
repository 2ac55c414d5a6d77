"""rutter's language server and command-line interface: thin adapters over rutter_core."""

__version__ = "0.1.0"
