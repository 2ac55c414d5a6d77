"""The language server's pure pieces, without a server: positions, paths, settings, errors."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from lsprotocol import types

from rutter_core.kernel.errors import (
    ConflictError,
    DiscoveryError,
    ErrorCategory,
    NotFoundError,
    RutterError,
    UsageError,
)
from rutter_lsp.errors import LSP_ERROR_CODES, jsonrpc_error
from rutter_lsp.index.paths import (
    Folder,
    classify,
    is_watched_path,
    locate,
    path_of_uri,
    uri_of_path,
)
from rutter_lsp.positions import TextPositions, byte_offset_range, units
from rutter_lsp.serve import parse_args, parse_tcp
from rutter_lsp.settings import Settings, parse_settings, plain

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


# -- positions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "utf8", "utf16", "utf32"),
    [("abc", 3, 3, 3), ("é", 2, 1, 1), ("日本", 6, 2, 2), ("😀", 4, 2, 1), ("a😀b", 6, 4, 3)],
)
def test_units(text: str, utf8: int, utf16: int, utf32: int) -> None:
    assert (units(text, UTF8), units(text, UTF16), units(text, UTF32)) == (utf8, utf16, utf32)


def test_positions_over_mixed_line_endings() -> None:
    text = "a\r\nbé😀c\rd\ne"
    for encoding, column in ((UTF16, 4), (UTF8, 7), (UTF32, 3)):
        positions = TextPositions(text, encoding)
        assert positions.line_count == 4
        assert positions.position(text.index("c")) == types.Position(1, column)
        assert positions.position(text.index("d")) == types.Position(2, 0)
        assert positions.position(len(text)) == types.Position(3, 1)
        assert positions.line_text(0) == "a"
        assert positions.line_text(9) == ""
    assert TextPositions(text, UTF16).line_range(1) == types.Range(
        types.Position(1, 0), types.Position(1, 5)
    )


def test_byte_offset_range() -> None:
    raw = b"line one\r\ncaf\xc3\xa9 \xff bad\n"
    offset = raw.index(b"\xff")
    assert byte_offset_range(raw, offset, UTF16) == types.Range(
        types.Position(1, 5), types.Position(1, 6)
    )
    assert byte_offset_range(raw, offset, UTF8) == types.Range(
        types.Position(1, 6), types.Position(1, 7)
    )
    bom = b"\xef\xbb\xbfab\xfe"
    assert byte_offset_range(bom, 5, UTF16).start == types.Position(0, 2)


# -- paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "kind", "level"),
    [
        ("AGENTS.md", "agents", "."),
        ("a/b/AGENTS.override.md", "agents_override", "a/b"),
        ("CLAUDE.md", "claude", "."),
        ("x/.claude/CLAUDE.md", "claude_dir", "x"),
        (".prayu/instructions.md", "prayu_instructions", "."),
        ("x/.prayu/rules/a/b.MD", "prayu_rule", "x"),
        (".prayu/rules/style.md", "prayu_rule", "."),
        (".prayu/instructions.ignore", "ignore_file", "."),
    ],
)
def test_classify(rel: str, kind: str, level: str) -> None:
    found = classify(rel)
    assert found is not None
    assert (found.kind, found.level) == (kind, level)


@pytest.mark.parametrize(
    "rel",
    [
        "README.md",
        "agents.md",
        "x/.prayu/instructions.ignore",
        ".prayu/rules/notes.txt",
        ".claude/settings.json",
        ".prayu/other.md",
    ],
)
def test_not_instruction_files(rel: str) -> None:
    assert classify(rel) is None


def test_precedence_from_the_path() -> None:
    agents = classify("a/b/AGENTS.md")
    assert agents is not None
    assert (agents.depth, agents.precedence) == (2, 200)
    rule = classify(".prayu/rules/x.md")
    assert rule is not None
    assert rule.precedence is None  # known only once the level's rules are sorted


def test_watched_paths() -> None:
    assert is_watched_path("a/AGENTS.md")
    assert is_watched_path(".prayu/rules")
    assert is_watched_path("x/.prayu/rules/y.md")
    assert is_watched_path("x/.claude")
    assert not is_watched_path("src/main.go")


def test_locate_picks_the_deepest_folder(tmp_path: Path) -> None:
    outer = Folder("file:///o", str(tmp_path / "o"), "o", "o", str(tmp_path / "o"))
    inner = Folder("file:///i", str(tmp_path / "o/i"), "i", "i", str(tmp_path / "o/i"))
    via_link = Folder("file:///l", "/some/link", "l", "l", str(tmp_path / "real"))
    folders = [outer, inner, via_link]
    found = locate(str(tmp_path / "o/i/src/a.go"), folders)
    assert found is not None
    assert (found.folder.workspace_id, found.rel) == ("i", "src/a.go")
    found = locate(str(tmp_path / "o/x"), folders)
    assert found is not None
    assert (found.folder.workspace_id, found.rel) == ("o", "x")
    found = locate("/some/link/AGENTS.md", folders)  # the path the client named the folder by
    assert found is not None
    assert (found.folder.workspace_id, found.rel) == ("l", "AGENTS.md")
    assert locate(str(tmp_path / "other"), folders) is None
    assert locate(str(tmp_path / "o-sibling/a"), folders) is None


def test_uris() -> None:
    assert path_of_uri(uri_of_path("/tmp/a b/ü.md")) == "/tmp/a b/ü.md"
    assert path_of_uri("untitled:Untitled-1") is None


# -- settings and arguments -----------------------------------------------------------------


def test_settings() -> None:
    assert parse_settings(None) == Settings()
    parsed = parse_settings({"databaseUrl": "sqlite:////x.db", "logLevel": "DEBUG", "other": 1})
    assert parsed == Settings("sqlite:////x.db", "debug")
    nested = parse_settings({"rutter": {"logLevel": "warning"}}, base=parsed)
    assert nested == Settings("sqlite:////x.db", "warning")
    assert parse_settings({"databaseUrl": None}, base=parsed).database_url is None
    assert parse_settings({"databaseUrl": "", "logLevel": None}, base=parsed) == Settings()
    one_wrong = parse_settings({"databaseUrl": True, "logLevel": "Error"}, base=parsed)
    assert one_wrong == Settings("sqlite:////x.db", "error")  # the wrong key alone is ignored
    assert one_wrong.problems == ("rutter.databaseUrl must be a string, got a boolean",)
    wrong = parse_settings({"databaseUrl": 3, "logLevel": "loud"})
    assert wrong == Settings()
    assert len(wrong.problems) == 2
    assert parse_settings([1]).problems


class _Uri(NamedTuple):  # what pygls makes of `{"uri": ...}` in untyped params
    uri: str


class _Params(NamedTuple):
    textDocument: _Uri  # the JSON key
    list: list[_Uri]


def test_plain_turns_pygls_namedtuples_into_dicts() -> None:
    inner = _Uri("file:///a")
    outer = _Params(inner, [inner])
    assert plain(outer) == {"textDocument": {"uri": "file:///a"}, "list": [{"uri": "file:///a"}]}


def test_server_arguments() -> None:
    args = parse_args(["--tcp", "127.0.0.1:2087", "--log-level", "debug"])
    assert (args.tcp, args.log_level, args.database_url) == ("127.0.0.1:2087", "debug", None)
    assert parse_tcp(":9000") == ("127.0.0.1", 9000)
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_tcp("localhost")
    with pytest.raises(SystemExit):
        parse_args(["--tcp", "nope"])


# -- errors ---------------------------------------------------------------------------------


def test_lsp_error_codes_cover_every_category() -> None:
    assert set(LSP_ERROR_CODES) == set(ErrorCategory)
    assert LSP_ERROR_CODES[ErrorCategory.INTERNAL] == types.ErrorCodes.InternalError
    assert LSP_ERROR_CODES[ErrorCategory.USAGE] == types.ErrorCodes.InvalidParams
    assert LSP_ERROR_CODES[ErrorCategory.REJECTED] == types.LSPErrorCodes.RequestFailed
    assert LSP_ERROR_CODES[ErrorCategory.CONFLICT] == types.LSPErrorCodes.ContentModified
    assert LSP_ERROR_CODES[ErrorCategory.NOT_FOUND] == types.LSPErrorCodes.RequestFailed


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError("usage", "bad"), -32602),
        (DiscoveryError("symlink", "link", path="AGENTS.md"), -32803),
        (ConflictError("conflict", "stale"), -32801),
        (NotFoundError("not_registered", "no"), -32803),
        (RutterError("internal", "bug"), -32603),
    ],
)
def test_jsonrpc_error(error: RutterError, code: int) -> None:
    mapped = jsonrpc_error(error)
    assert mapped.code == code
    assert mapped.data == error.to_json()
    assert mapped.message.startswith(f"{error.code}: ")
