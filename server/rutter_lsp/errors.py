"""Where the core error hierarchy meets the language server: mapped once, here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rutter_core.kernel.errors import ErrorCategory, RutterError

if TYPE_CHECKING:
    from pygls.exceptions import JsonRpcException

# -- language server --------------------------------------------------------------------------
# Requests that must fail as a JSON-RPC error (rather than return a typed `{"error": ...}`
# body, as the custom `rutter/*` requests do) use this one mapping. `data` carries the typed
# error (`code`, `message`, `path`?, `details`?) so clients can still tell the cause.

LSP_ERROR_CODES: dict[ErrorCategory, int] = {
    ErrorCategory.INTERNAL: -32603,  # ErrorCodes.InternalError
    ErrorCategory.USAGE: -32602,  # ErrorCodes.InvalidParams
    ErrorCategory.REJECTED: -32803,  # LSPErrorCodes.RequestFailed
    ErrorCategory.CONFLICT: -32801,  # LSPErrorCodes.ContentModified
    ErrorCategory.NOT_FOUND: -32803,  # LSPErrorCodes.RequestFailed
}


def jsonrpc_error(error: RutterError) -> JsonRpcException:
    """The JSON-RPC error a request handler raises for a typed failure."""
    from pygls.exceptions import JsonRpcException

    return JsonRpcException(
        message=f"{error.code}: {error.message}",
        code=LSP_ERROR_CODES[error.category],
        data=error.to_json(),
    )
