"""Modules imported on first use instead of at import time.

`defer_import(name)` puts a placeholder for module `name` in `sys.modules`. Importing `name`
then costs nothing; the first attribute looked up on it imports the real module, which from
then on is what the placeholder answers with and what `sys.modules` holds. Used for modules a
dependency imports at its top but calls only on paths rutter never takes (detect-secrets
imports `requests` for verifying secrets online, which redaction never does): the import of
`requests` and `urllib3` is a tenth of a second of every CLI call.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

_LOCK = threading.RLock()


class _Deferred(types.ModuleType):
    """Stands for a module not imported yet; the first attribute lookup imports it."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_load(self), name)


def _load(placeholder: _Deferred) -> types.ModuleType:
    with _LOCK:
        module_name = placeholder.__name__
        current = sys.modules.get(module_name)
        if current is not None and current is not placeholder:
            return current
        sys.modules.pop(module_name, None)
        try:
            real = importlib.import_module(module_name)
        except BaseException:
            sys.modules[module_name] = placeholder
            raise
        # Whoever kept the placeholder (a module's global) sees the real names from now on.
        placeholder.__dict__.update(real.__dict__)
        return real


def defer_import(name: str) -> None:
    """Import top-level module `name` only when one of its attributes is first used.

    Does nothing when `name` is imported already or not installed (a later import then fails
    as it would have)."""
    with _LOCK:
        if name in sys.modules or "." in name:
            return
        spec = importlib.util.find_spec(name)
        if spec is None:
            return
        placeholder = _Deferred(name)
        # `import name` looks at `__spec__` of a module already in sys.modules: give it the real
        # spec, not being initialised, so that lookup does not import the module.
        placeholder.__spec__ = spec
        sys.modules[name] = placeholder
