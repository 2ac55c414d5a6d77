"""thread pins and pin proposals: requests, and the notification of new proposals."""

from rutter_lsp.features.pins.pins import register

__all__ = ["register"]
