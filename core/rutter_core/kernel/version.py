"""rutter's own version, read from the installed package's metadata: what `rutter --version`,
the MCP server and the OpenAPI document say. In the kernel so that `rutter --version` loads
nothing else of rutter (no app layer, no store)."""

from __future__ import annotations

DISTRIBUTION = "rutter"
"""The distribution that installs rutter (its `rutter` command and its servers)."""


def rutter_version() -> str | None:
    """rutter's version from the installed package's metadata (None when run from a source tree
    that was never installed): what `rutter --version`, the MCP server and the OpenAPI document
    say."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return None
