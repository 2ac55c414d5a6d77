"""thread pins and pin proposals: requests, and the notification of new proposals."""

from rutter_lsp.features.pins.pins import Pins

__all__ = ["Pins"]
