"""rutter core: the domain, the store and the application layer (`rutter_core.app`).

Layers, lowest first (docs/architecture.md; import-linter keeps them): `kernel`, `store`,
`discovery`, then the areas `workspaces`, `memory`, `runs`, `continuity`, then `app`.
This package never imports pygls, never prints, and keeps no global state.
"""

__version__ = "0.1.0"
