"""Which `Host` headers the server answers: the defence of a loopback service against DNS
rebinding (a web page whose name is made to resolve to 127.0.0.1 reaches the server with its
own name in `Host`). A bearer is still required on every route; this check comes first.

Served: the bound address; on a loopback bind, `localhost` and any loopback address; on a
wildcard bind (`0.0.0.0`, `::`), any address, and `localhost`; and the names the operator
allows (`--allow-host NAME`, e.g. a proxy's). An address cannot be rebound, a name can. Names
are compared case-insensitively, a trailing dot ignored; the port is not checked (a proxy in
front may serve another one).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from rutter_core.kernel.errors import Hint, UsageError

_NAME: Final = re.compile(r"(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_][a-z0-9_-]{0,62})*")
"""A DNS name as a `Host` header carries it (letters, digits, `-`, `_`; labels of 1-63)."""


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _name(text: str) -> str:
    return text.lower().removesuffix(".")


def allowed_name(text: str) -> str:
    """An `--allow-host` value as compared: a DNS name or an address, nothing else (no
    scheme, port, wildcard or space)."""
    name = _name(text.strip("[]") if text.startswith("[") else text)
    if _address(name) is None and _NAME.fullmatch(name) is None:
        raise UsageError(
            "invalid_allow_host",
            "an allowed host is a DNS name or an IP address, without scheme or port",
            hint=Hint("give_allow_host"),
        )
    return name


@dataclass(frozen=True, slots=True)
class HostRule:
    bound: str
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, bound: str, names: Iterable[str] = ()) -> HostRule:
        return cls(_name(bound), frozenset(allowed_name(name) for name in names))

    def admits(self, header: str | None) -> bool:
        """Whether a request whose `Host` header is `header` (None: none, or several) is
        for this server."""
        if header is None:
            return False
        host = _host_of(header)
        if host is None:
            return False
        if host == self.bound or host in self.names:
            return True
        bound = _address(self.bound)
        wildcard = bound is not None and bound.is_unspecified
        loopback = self.bound == "localhost" or (bound is not None and bound.is_loopback)
        if host == "localhost":
            return loopback or wildcard
        address = _address(host)
        if address is None:
            return False
        if wildcard:
            return True
        return loopback and address.is_loopback


def _host_of(header: str) -> str | None:
    """The host of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), lower case."""
    text = header.strip()
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return inside.lower() if _address(inside) is not None else None
    host, colon, port = text.partition(":")
    if colon and not port.isdigit():
        return None
    name = _name(host)
    return name if name and (_address(name) is not None or _NAME.fullmatch(name)) else None
