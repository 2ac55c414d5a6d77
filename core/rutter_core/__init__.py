"""rutter core: project-instruction discovery, redaction, fingerprints and the store.

This package never imports pygls, never prints, and keeps no global state.
"""

__version__ = "0.1.0"
