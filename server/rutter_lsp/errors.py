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


# -- params of the standard methods -----------------------------------------------------------
# pygls decodes them with lsprotocol's cattrs converter; what did not fit is described here by
# field and rule. Never with the exception's own text: attrs' validators put the value in it
# ("should be in range [0:2147483647], but was -1").


class WrongType(TypeError):
    """A JSON value of the wrong type where lsprotocol expects a string, a number or a
    boolean (cattrs would otherwise convert it: `"uri": 5` became the URI `"5"`)."""

    def __init__(self, expected: str, rule: str) -> None:
        super().__init__(f"must be {expected}")
        self.expected = expected
        self.rule = rule
        """The rule's name, as pydantic names it (`string_type`, `int_type`, ...)."""


def structure_error(error: BaseException) -> RutterError:
    """What did not fit in a message that pygls' converter could not decode, by field (the
    protocol's camelCase names, relative to the params), never by value: the app layer's one
    `invalid_params` error."""
    from cattrs.errors import AttributeValidationNote, IterableValidationNote

    from rutter_core.app.models import ParamsProblem, params_error

    problems: list[ParamsProblem] = []

    def walk(exc: BaseException, path: tuple[str, ...]) -> None:
        for note in getattr(exc, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                path = (*path, _wire_name(note.name))
            elif isinstance(note, IterableValidationNote):
                path = (*path, f"[{int(note.index)}]")
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner, path)
            return
        if path[:1] == ("params",):
            path = path[1:]
        field = ".".join(path).replace(".[", "[") or None
        named = field or "params"
        if isinstance(exc, KeyError):
            problems.append(ParamsProblem(field, "missing", f"missing field {named!r}"))
        elif isinstance(exc, WrongType):
            says = f"{named!r} must be {exc.expected}"
            problems.append(ParamsProblem(field, exc.rule, says))
        else:
            says = f"{named!r} does not fit its type or range"
            problems.append(ParamsProblem(field, "type_or_range", says))

    walk(error, ())
    return params_error(problems)


def _wire_name(attribute: str) -> str:
    """lsprotocol's attribute name as the protocol spells it (`text_document` → `textDocument`,
    `from_` → `from`)."""
    head, *rest = attribute.rstrip("_").split("_")
    return head + "".join(word.capitalize() for word in rest)
