"""Model summarizers: an OpenAI-compatible chat-completions endpoint (`openai`) or the Messages
API (`anthropic`), called once per compaction through a maintained HTTP client.

What is configured is `Endpoint`: the base URL, the model and the *name* of the environment
variable that holds the key; the key itself is read from that variable by whoever builds the
summarizer, handed to `ModelEndpoint`, sent in one header and nowhere else (never stored,
recorded, shown in an error or part of `repr`).

- `openai`: `POST {base_url}/chat/completions` `{"model", "messages": [{"role": "user",
  "content": PROMPT}], "max_tokens"}` with `Authorization: Bearer KEY`; the summary is
  `choices[0].message.content`, and `finish_reason` `length` means it was cut short.
- `anthropic`: `POST {base_url}/v1/messages` `{"model", "max_tokens", "messages": [...]}` with
  `x-api-key: KEY` and `anthropic-version`; the summary is the `text` blocks of `content`, and
  `stop_reason` `max_tokens` means it was cut short.

The prompt is `render_prompt`'s (redacted on its way out); one holding the key itself is never
sent. One request, never retried; no redirect followed (it would carry the key elsewhere). The
whole call is bounded by the timeout (connect, send, and the answer read as it arrives) and the
answer by `MAX_ENDPOINT_RESPONSE_BYTES`. Every failure (unreachable, refused, an HTTP error
status, a timeout, an answer that is not the protocol's JSON, cut short, refused by the model,
empty) is `summarizer_failed` with `details.reason` and a hint naming what to check; the
answer's body is never read back into an error.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from rutter_core.continuity.compaction.model import (
    ENDPOINT_OUTPUT_TOKENS,
    MAX_ENDPOINT_RESPONSE_BYTES,
    EndpointKind,
    SummarizerFailed,
    SummarizerName,
)
from rutter_core.continuity.compaction.summarizers import SummarizerInput, render_prompt
from rutter_core.kernel.errors import Hint, UsageError

ANTHROPIC_VERSION: Final = "2023-06-01"
DEFAULT_BASE_URLS: Final[dict[EndpointKind, str]] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_KEY_ENVS: Final[dict[EndpointKind, str]] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
_MODEL: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}")
_KEY_ENV: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_MAX_URL_CHARS: Final = 2048
_CONNECT_SECONDS: Final = 10.0


def config_env(kind: EndpointKind, setting: str) -> str:
    """The environment variable a setting of `kind` is read from by default, such as
    `RUTTER_SUMMARIZER_OPENAI_BASE_URL` (settings: BASE_URL, MODEL, KEY_ENV)."""
    return f"RUTTER_SUMMARIZER_{kind.upper()}_{setting}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a model summarizer sends the prompt (checked by `check_endpoint`)."""

    kind: EndpointKind
    base_url: str
    """http(s), no credentials, query or fragment; without a trailing slash."""
    model: str
    key_env: str
    """The name of the environment variable holding the key; empty: no key is sent."""

    def record(self) -> dict[str, str]:
        """What the compaction's record says of it (no key, only its variable's name)."""
        return {"kind": self.kind, "base_url": self.base_url, "model": self.model,
                "key_env": self.key_env}  # fmt: skip


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_endpoint(
    kind: EndpointKind, base_url: str | None, model: str | None, key_env: str | None
) -> Endpoint:
    """The endpoint from its settings (None: the default base URL and key variable; a model
    has no default). Errors name the setting, never its value."""
    url = DEFAULT_BASE_URLS[kind] if base_url is None else base_url.strip()
    parts = urlsplit(url) if len(url) <= _MAX_URL_CHARS and url.isprintable() else None
    try:
        host = parts.hostname if parts is not None else None
    except ValueError:
        host = None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not host
        or "@" in parts.netloc
        or parts.query
        or parts.fragment
        or " " in url
    ):
        raise UsageError(
            "invalid_summarizer_base_url",
            f"the {kind} summarizer's base URL must be an http or https URL with a host and no "
            "credentials, query or fragment",
            details={"field": "summarizer_base_url", "summarizer": kind},
            hint=Hint("give_summarizer_base_url", {"summarizer": kind}),
        )
    if model is None or not model.strip():
        raise UsageError(
            "summarizer_model_missing",
            f"the {kind} summarizer needs the model to ask",
            details={"field": "summarizer_model", "summarizer": kind},
            hint=Hint("give_summarizer_model", {"summarizer": kind}),
        )
    if _MODEL.fullmatch(model) is None:
        raise UsageError(
            "invalid_summarizer_model",
            "a model name is 1-256 letters, digits and . _ : / @ + -",
            details={"field": "summarizer_model", "summarizer": kind},
            hint=Hint("give_summarizer_model", {"summarizer": kind}),
        )
    env = DEFAULT_KEY_ENVS[kind] if key_env is None else key_env.strip()
    if env and _KEY_ENV.fullmatch(env) is None:
        raise UsageError(
            "invalid_summarizer_key_env",
            "the key's environment variable is named with letters, digits and _ (not the key "
            "itself), or empty to send no key",
            details={"field": "summarizer_key_env", "summarizer": kind},
            hint=Hint("give_summarizer_key_env", {"summarizer": kind}),
        )
    if env and parts.scheme == "http" and not _loopback(host):
        raise UsageError(
            "insecure_summarizer_endpoint",
            f"the {kind} summarizer would send its key over plain http to another machine; use "
            "https, or a loopback address, or send no key",
            details={"field": "summarizer_base_url", "summarizer": kind},
            hint=Hint("use_https_endpoint", {"summarizer": kind}),
        )
    return Endpoint(kind, url.rstrip("/"), model, env)


def read_key(endpoint: Endpoint, environ: Mapping[str, str]) -> str | None:
    """The key from the environment variable the endpoint names (None when it names none);
    an unset or blank variable is `summarizer_key_missing`, naming the variable only."""
    if not endpoint.key_env:
        return None
    key = str(environ.get(endpoint.key_env, "")).strip()
    if not key:
        raise UsageError(
            "summarizer_key_missing",
            f"the {endpoint.kind} summarizer's key is read from the environment variable "
            f"{endpoint.key_env}, which is not set here",
            details={"field": "summarizer_key_env", "summarizer": endpoint.kind,
                     "key_env": endpoint.key_env},
            hint=Hint("set_summarizer_key",
                      {"summarizer": endpoint.kind, "key_env": endpoint.key_env}),
        )  # fmt: skip
    if not key.isprintable() or not key.isascii():
        raise UsageError(
            "invalid_summarizer_key",
            f"the value of {endpoint.key_env} cannot be sent in a header (it is not one line "
            "of ASCII)",
            details={"field": "summarizer_key_env", "summarizer": endpoint.kind,
                     "key_env": endpoint.key_env},
            hint=Hint("set_summarizer_key",
                      {"summarizer": endpoint.kind, "key_env": endpoint.key_env}),
        )  # fmt: skip
    return key


@dataclass(frozen=True, slots=True)
class _Answer:
    status: int
    body: bytes
    retry_after: int | None


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """A model summarizer (see the module docstring)."""

    endpoint: Endpoint
    key: str | None = field(repr=False)
    timeout: float = 120.0

    @property
    def name(self) -> SummarizerName:
        return self.endpoint.kind

    def summarize(self, given: SummarizerInput) -> str:
        return self.send(render_prompt(given))

    def send(self, prompt: str) -> str:
        if self.key and len(self.key) >= 8 and self.key in prompt:
            raise self._failed(
                "key_in_prompt",
                "the prompt holds the summarizer's own key; nothing was sent (change the key: "
                "it is in the thread)",
                "rotate_summarizer_key",
            )
        kind = self.endpoint.kind
        headers = {"content-type": "application/json", "accept": "application/json"}
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "max_tokens": ENDPOINT_OUTPUT_TOKENS,
            "messages": [{"role": "user", "content": prompt}],
        }
        if kind == "openai":
            url = f"{self.endpoint.base_url}/chat/completions"
            if self.key:
                headers["authorization"] = f"Bearer {self.key}"
        else:
            url = f"{self.endpoint.base_url}/v1/messages"
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if self.key:
                headers["x-api-key"] = self.key
        answer = self._post(url, headers, json.dumps(body).encode("utf-8"))
        self._check_status(answer)
        try:
            data = json.loads(answer.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        text = _openai_text(data) if kind == "openai" else _anthropic_text(data)
        if text is None:
            raise self._failed(
                "invalid_reply",
                f"the endpoint's answer is not a {kind} reply",
                "check_summarizer_endpoint",
            )
        reply, ending = text
        if ending in ("length", "max_tokens"):
            raise self._failed(
                "cut_short",
                f"the model's reply was cut short at its output limit ({ending})",
                "narrow_summarizer_input",
            )
        if ending in ("content_filter", "refusal"):
            raise self._failed(
                "refused", f"the model declined to answer ({ending})", "check_summarizer_model"
            )
        return reply

    def _post(self, url: str, headers: dict[str, str], content: bytes) -> _Answer:
        import httpx2  # the client costs a CLI start nothing until a model is called

        deadline = time.monotonic() + self.timeout
        limits = httpx2.Timeout(self.timeout, connect=min(self.timeout, _CONNECT_SECONDS))
        try:
            with (
                httpx2.Client(timeout=limits, follow_redirects=False) as client,
                client.stream("POST", url, headers=headers, content=content) as response,
            ):
                received = bytearray()
                for chunk in response.iter_bytes():
                    received.extend(chunk)
                    if len(received) > MAX_ENDPOINT_RESPONSE_BYTES:
                        raise self._failed(
                            "output_too_large",
                            f"the endpoint answered more than {MAX_ENDPOINT_RESPONSE_BYTES} bytes",
                            "check_summarizer_endpoint",
                        )
                    if time.monotonic() > deadline:
                        raise httpx2.ReadTimeout("the answer took too long")
                return _Answer(
                    response.status_code, bytes(received),
                    _seconds(response.headers.get("retry-after")),
                )  # fmt: skip
        except httpx2.TimeoutException:
            raise self._failed(
                "timeout",
                f"the endpoint did not answer within {self.timeout:g} seconds",
                "raise_summarizer_timeout",
            ) from None
        except (httpx2.ConnectError, httpx2.ProxyError, httpx2.UnsupportedProtocol):
            raise self._failed(
                "not_reachable", "the endpoint could not be reached", "check_summarizer_endpoint"
            ) from None
        except (httpx2.HTTPError, httpx2.InvalidURL, httpx2.StreamError):
            raise self._failed(
                "transport", "the connection to the endpoint failed mid-answer",
                "check_summarizer_endpoint",
            ) from None  # fmt: skip

    def _check_status(self, answer: _Answer) -> None:
        status = answer.status
        if 200 <= status < 300:
            return
        extra: dict[str, object] = {"status": status}
        if status in (401, 403):
            reason, said, fix = "unauthorized", "refused the key", "check_summarizer_key"
        elif status == 429:
            reason, said, fix = "rate_limited", "is rate-limiting this key", "wait_for_summarizer"
            if answer.retry_after is not None:
                extra["retry_after_seconds"] = answer.retry_after
        elif status == 404:
            reason, said, fix = (
                "not_found",
                "has no such path or model",
                "check_summarizer_endpoint",
            )
        elif status in (400, 413, 422):
            reason, said, fix = "bad_request", "refused the request", "check_summarizer_model"
        elif status >= 500:
            reason, said, fix = "endpoint_error", "failed", "retry_summarizer_later"
        else:
            reason, said, fix = (
                "unexpected_status",
                "answered unexpectedly",
                ("check_summarizer_endpoint"),
            )
        raise self._failed(reason, f"the endpoint {said} (HTTP {status})", fix, **extra)

    def _failed(self, reason: str, message: str, fix: str, **extra: object) -> SummarizerFailed:
        kind = self.endpoint.kind
        params: dict[str, str | int] = {"summarizer": kind}
        if fix in ("check_summarizer_key", "rotate_summarizer_key"):
            params["key_env"] = self.endpoint.key_env
        if fix == "raise_summarizer_timeout":
            params["timeout"] = int(self.timeout)
        retry_after = extra.get("retry_after_seconds")
        if isinstance(retry_after, int):
            params["retry_after"] = retry_after
        return SummarizerFailed(
            "summarizer_failed",
            f"the {kind} summarizer failed: {message}; nothing was stored and the thread's "
            "previous summary stays the latest",
            details={"summarizer": kind, "reason": reason, **extra},
            hint=Hint(fix, params),
        )


def _seconds(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit() or not value.strip().isascii():
        return None
    return min(int(value.strip()), 86_400)


def _openai_text(data: Any) -> tuple[str, str | None] | None:
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
        ending = choice.get("finish_reason")
    except (TypeError, KeyError, IndexError, AttributeError):
        return None
    if content is None:
        content = ""
    if isinstance(content, list):  # content parts, as some compatible servers answer
        texts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        content = "".join(t for t in texts if isinstance(t, str))
    if not isinstance(content, str) or not (ending is None or isinstance(ending, str)):
        return None
    return content, ending


def _anthropic_text(data: Any) -> tuple[str, str | None] | None:
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return None
    ending = data.get("stop_reason")
    if not (ending is None or isinstance(ending, str)):
        return None
    texts = []
    for block in data["content"]:
        if not isinstance(block, dict):
            return None
        if block.get("type") == "text":
            if not isinstance(block.get("text"), str):
                return None
            texts.append(block["text"])
    return "".join(texts), ending


__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_BASE_URLS",
    "DEFAULT_KEY_ENVS",
    "Endpoint",
    "ModelEndpoint",
    "check_endpoint",
    "config_env",
    "read_key",
]
