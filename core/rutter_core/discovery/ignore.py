"""The `.prayu/instructions.ignore` matcher (docs/reference/discovery.md).

Gitignore semantics with `git check-ignore --no-index` as the reference: `IgnoreRules.match`
gives git's verdict and git's deciding line for a workspace-relative file path.

pathspec's `GitIgnoreSpec` is not used for matching because it disagrees with git (see
tests/test_ignore.py). Its regexes match "this path or one of its parents", and that can't
express git's walk: once a parent directory is excluded, a later `!` line for a file inside it
has no effect, and a `!` line that re-includes a parent doesn't decide for the file. It also
differs in smaller ways: `a[!x]b` matches `a/b`, git's `x/ab**/c` quirk is missing,
`[[:alpha:]]` doesn't work, trailing tabs are stripped, and `?` matches a code point instead of
a byte. So each line is translated here into one byte regex, following git's `dir.c` and
`wildmatch.c`. The regex matches exactly the paths that line matches, not their descendants,
and `match` repeats git's walk over the parent directories.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from rutter_core.kernel.errors import discovery_error

IGNORE_FILE: Final = ".prayu/instructions.ignore"

_DEFAULT_CASE_INSENSITIVE: Final = os.name == "nt"

# Empty and whitespace-only lines are blank (not patterns), as discovery.md says. Git would
# keep a tab-only line as a pattern for a file named by that tab, which no source is named.
_BLANK_CHARS: Final = " \t\r\v\f"
_DRIVE_LETTER: Final = re.compile(r"/?[A-Za-z]:")

# Character classes of git's wildmatch (ASCII only; checked against git in the tests).
_CLASSES: Final[dict[bytes, frozenset[int]]] = {
    b"alnum": frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"alpha": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    b"blank": frozenset(b" \t"),
    b"cntrl": frozenset([*range(0, 32), 127]),
    b"digit": frozenset(b"0123456789"),
    b"graph": frozenset(range(33, 127)),
    b"lower": frozenset(b"abcdefghijklmnopqrstuvwxyz"),
    b"print": frozenset(range(32, 127)),
    b"punct": frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    b"space": frozenset(b" \t\n\r"),
    b"upper": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    b"xdigit": frozenset(b"0123456789ABCDEFabcdef"),
}
_LETTERS: Final = _CLASSES[b"alpha"]

_SLASH: Final = 0x2F
# Token kinds besides regex fragments (bytes).
_STAR: Final = 0  # `*`, or a `**` that git treats like `*`: stays within one path segment
_ANY_DIRS: Final = 1  # `**/`: zero or more whole directories
_ANY_REST: Final = 2  # trailing `**`: everything that is left
_Token = bytes | int


class _NeverMatches(Exception):
    """Git's wildmatch aborts on this pattern (e.g. an unclosed `[`), so it matches nothing."""


@dataclass(frozen=True, slots=True)
class IgnoreMatch:
    line: int
    """1-based line number in the ignore file of the deciding pattern."""
    pattern: str
    """That line's pattern text as written (CR and trailing spaces stripped, as git does)."""


@dataclass(frozen=True, slots=True)
class _Rule:
    match: IgnoreMatch  # built once in parse so `match()` allocates nothing
    negative: bool


# How one line is matched: by basename or by the whole path, as a literal or by regex.
_BASE_LITERAL: Final = "base_literal"
_PATH_LITERAL: Final = "path_literal"
_BASE_REGEX: Final = "base_regex"
_PATH_REGEX: Final = "path_regex"


class _Table:
    """All lines that can match one kind of subject (a directory, or a file), indexed so that
    finding the last matching line costs two dict lookups and at most two regex calls."""

    __slots__ = ("_base_idx", "_base_lit", "_base_re", "_path_idx", "_path_lit", "_path_re")

    def __init__(self, compiled: list[tuple[int, str, bytes]]) -> None:
        # Later lines overwrite earlier ones, so each literal maps to its last line.
        self._base_lit = {key: i for i, kind, key in compiled if kind == _BASE_LITERAL}
        self._path_lit = {key: i for i, kind, key in compiled if kind == _PATH_LITERAL}
        self._base_re, self._base_idx = _alternation(
            [(i, rx) for i, kind, rx in compiled if kind == _BASE_REGEX]
        )
        self._path_re, self._path_idx = _alternation(
            [(i, rx) for i, kind, rx in compiled if kind == _PATH_REGEX]
        )

    def last(self, subject: bytes, base: int, end: int) -> int:
        """Index of the last line matching `subject[:end]`, whose last component starts at
        `base`; -1 when none does."""
        best = -1
        if self._base_lit:
            best = self._base_lit.get(subject[base:end], -1)
        if self._path_lit:
            found_lit = self._path_lit.get(subject[:end], -1)
            best = max(best, found_lit)
        # `_idx[0]` is the highest line in the regex; skip it when a literal already beat it.
        if self._base_re is not None and self._base_idx[0] > best:
            found = self._base_re.fullmatch(subject, base, end)
            if found is not None and self._base_idx[found.lastindex or 0] > best:
                best = self._base_idx[found.lastindex or 0]
        if self._path_re is not None and self._path_idx[0] > best:
            found = self._path_re.fullmatch(subject, 0, end)
            if found is not None and self._path_idx[found.lastindex or 0] > best:
                best = self._path_idx[found.lastindex or 0]
        return best


class IgnoreRules:
    """Compiled ignore patterns. Immutable; `match` is safe to call from any thread."""

    __slots__ = ("_dirs", "_files", "_fold", "_rules")

    def __init__(
        self,
        rules: list[tuple[_Rule, tuple[str, bytes] | None, bool]],
        case_insensitive: bool,
    ) -> None:
        self._rules = tuple(rule for rule, _, _ in rules)
        self._fold = case_insensitive
        live = [(i, c, dir_only) for i, (_, c, dir_only) in enumerate(rules) if c is not None]
        # A directory is matched by every line; a file only by lines without a trailing `/`.
        self._dirs = _Table([(i, kind, key) for i, (kind, key), _ in live])
        self._files = _Table([(i, kind, key) for i, (kind, key), dir_only in live if not dir_only])

    @classmethod
    def parse(
        cls,
        raw: bytes,
        *,
        max_bytes: int = 16384,
        max_patterns: int = 128,
        case_insensitive: bool = _DEFAULT_CASE_INSENSITIVE,
    ) -> IgnoreRules:
        """Validate and compile the ignore file's bytes; raise `invalid_ignore` when invalid."""
        if len(raw) > max_bytes:
            raise _invalid(
                f"{IGNORE_FILE} is {len(raw)} bytes, more than the {max_bytes}-byte limit; "
                "remove or merge patterns until it fits",
                None,
            )
        if raw.startswith(codecs.BOM_UTF8):
            raw = raw[len(codecs.BOM_UTF8) :]
        rules: list[tuple[_Rule, tuple[str, bytes] | None, bool]] = []
        for lineno, text in _lines(raw):
            # Like git, a comment needs `#` in the first column.
            if text.startswith("#") or not text.strip(_BLANK_CHARS):
                continue
            if len(rules) == max_patterns:
                raise _invalid(
                    f"line {lineno} of {IGNORE_FILE} is pattern {max_patterns + 1}, more than "
                    f"the {max_patterns}-pattern limit; remove patterns or merge them with "
                    "`*` or `**`",
                    lineno,
                )
            pattern = text.rstrip(" ")  # git strips trailing spaces but keeps tabs
            _check_line(pattern, lineno)
            negative = pattern.startswith("!")
            body = pattern[1:] if negative else pattern
            dir_only = body.endswith("/")
            if dir_only:
                body = body[:-1]
            if case_insensitive:
                body = body.lower()
            try:
                compiled: tuple[str, bytes] | None = _translate(
                    body.encode("utf-8"), case_insensitive
                )
            except _NeverMatches:
                compiled = None
            rules.append((_Rule(IgnoreMatch(lineno, pattern), negative), compiled, dir_only))
        return cls(rules, case_insensitive)

    @classmethod
    def empty(cls) -> IgnoreRules:
        """No rules (one shared object: rules are immutable, and every walk starts with
        these, so building them per walk was a measurable part of re-indexing)."""
        return _no_rules()

    @property
    def pattern_count(self) -> int:
        """Non-blank, non-comment lines, including ones that can never match."""
        return len(self._rules)

    def match(self, path: str) -> IgnoreMatch | None:
        """IgnoreMatch when `path` (a file path) is ignored; None when not ignored (no match, or
        the deciding pattern is a `!` re-include)."""
        rule = self._decide(path)
        if rule is None or rule.negative:
            return None
        return rule.match

    def _decide(self, path: str) -> _Rule | None:
        """The pattern `git check-ignore -v` reports for the file `path` (`!` ones included)."""
        if not self._rules:
            return None
        subject = (path.lower() if self._fold else path).encode("utf-8", "surrogateescape")
        rules, dirs = self._rules, self._dirs
        # Git's walk: each parent directory, from the top, is checked as a directory; the first
        # one whose deciding line excludes it decides for everything below it, so a later `!`
        # cannot re-include a file there. Only then is the file itself checked.
        base = 0
        slash = subject.find(b"/")
        while slash > 0:
            last = dirs.last(subject, base, slash)
            if last >= 0 and not rules[last].negative:
                return rules[last]
            base = slash + 1
            slash = subject.find(b"/", base)
        last = self._files.last(subject, base, len(subject))
        return rules[last] if last >= 0 else None

    def __repr__(self) -> str:
        return f"IgnoreRules(pattern_count={len(self._rules)})"


def _alternation(branches: list[tuple[int, bytes]]) -> tuple[re.Pattern[bytes] | None, list[int]]:
    """One regex for many lines. Git takes the *last* matching line: with the branches in
    reverse line order, the branch that matches is that line. Each branch ends in an empty
    group, its only one, so `lastindex` names it; putting the group last (not around the
    branch) keeps sre's first-character check that skips most branches cheaply.
    Returns the regex and the line index per group number; index 0 holds the highest line."""
    if not branches:
        return None, []
    branches = sorted(branches, reverse=True)
    regex = re.compile(b"|".join(rx + b"()" for _, rx in branches), re.DOTALL)
    return regex, [branches[0][0], *(i for i, _ in branches)]


def _invalid(message: str, line: int | None) -> Exception:
    details = None if line is None else {"line": line}
    return discovery_error("invalid_ignore", message, path=IGNORE_FILE, details=details)


def _lines(raw: bytes) -> Iterator[tuple[int, str]]:
    """Numbered lines as git splits them: on LF, dropping one CR before it."""
    for lineno, raw_line in enumerate(raw.split(b"\n"), start=1):
        line = raw_line[:-1] if raw_line.endswith(b"\r") else raw_line
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _invalid(
                f"line {lineno} of {IGNORE_FILE} is not valid UTF-8 (byte 0x{line[exc.start]:02x} "
                f"at column {exc.start + 1}); save the file as UTF-8",
                lineno,
            ) from None
        if "\0" in text:
            raise _invalid(
                f"line {lineno} of {IGNORE_FILE} contains a NUL byte; the ignore file must be "
                "plain text — remove the NUL byte",
                lineno,
            )
        yield lineno, text


def _check_line(pattern: str, lineno: int) -> None:
    where = f"line {lineno} of {IGNORE_FILE}"
    if "\\" in pattern:
        raise _invalid(
            f"{where} contains a backslash; escapes and `\\` separators are not supported — "
            "use `/` between directories and remove the backslash",
            lineno,
        )
    body = pattern[1:] if pattern.startswith("!") else pattern
    if _DRIVE_LETTER.match(body):
        raise _invalid(
            f"{where} starts with a drive letter; patterns are workspace-relative — write the "
            "path relative to the workspace root without the drive",
            lineno,
        )
    if ".." in body.split("/"):
        raise _invalid(
            f"{where} contains a `..` segment; patterns are workspace-relative and cannot "
            "escape the workspace — remove the `..`",
            lineno,
        )


def _translate(body: bytes, fold: bool) -> tuple[str, bytes]:
    """How to match exactly the paths git matches with `body` (the pattern without `!` and
    without the trailing `/`): a literal or a regex for `fullmatch`, against the last path
    component or against the whole path."""
    if not body:
        raise _NeverMatches  # `!` or `/` alone: git keeps an empty pattern that matches nothing
    literal = not any(c in body for c in b"*?[")
    if b"/" not in body:
        # No slash: git matches the last path component, with `**` meaning `*`.
        if literal:
            return _BASE_LITERAL, body
        return _BASE_REGEX, _part(_tokenize(body, fold, pathname=False))
    if body.startswith(b"/"):
        body = body[1:]  # anchoring is implicit: pathname patterns match from the root
    if literal:
        return _PATH_LITERAL, body
    tokens = _tokenize(body, fold, pathname=True)
    # Split at the `**` tokens. A part between two `**/` is matched at its earliest position and
    # that choice is committed (atomic group): any later position leaves less room, so this is
    # exact, and it keeps `**/a/**/a/**/…` from backtracking exponentially. A part followed by
    # a trailing `**` (which accepts anything) or by nothing needs no commitment.
    parts: list[list[_Token]] = [[]]
    seps: list[int] = []
    for token in tokens:
        if isinstance(token, int) and token != _STAR:
            seps.append(token)
            parts.append([])
        else:
            parts[-1].append(token)
    out = _part(parts[0])
    for i, sep in enumerate(seps):
        part = _part(parts[i + 1])
        if sep == _ANY_REST:
            out += b".*"
        elif i + 1 < len(seps) and seps[i + 1] == _ANY_DIRS:
            out += b"(?>(?:|.*?/)" + part + b")"
        else:
            out += b"(?:.*/|)" + part  # faster in sre than the equivalent `(?:.*/)?`
    return _PATH_REGEX, out


def _tokenize(pattern: bytes, fold: bool, *, pathname: bool) -> list[_Token]:
    # Git compares the leading run without `*?[` literally and hands only the rest to
    # wildmatch, which treats a `**` at its start as if a `/` preceded it. So `x/ab**/c`
    # matches `x/abc` and `x/b**` matches `x/b/c/d`; we reproduce that.
    wild_start = next((i for i, c in enumerate(pattern) if c in b"*?["), len(pattern))
    tokens: list[_Token] = []
    i, end = 0, len(pattern)
    while i < end:
        char = pattern[i]
        if char == 0x2A:  # `*`
            j = i
            while j < end and pattern[j] == 0x2A:
                j += 1
            starts_ok = i == wild_start or pattern[i - 1] == _SLASH
            if pathname and j - i >= 2 and starts_ok and j == end:
                tokens.append(_ANY_REST)
            elif pathname and j - i >= 2 and starts_ok and pattern[j] == _SLASH:
                tokens.append(_ANY_DIRS)
                j += 1  # the `/` belongs to `**/`, which may also match nothing at all
            else:
                tokens.append(_STAR)
            i = j
        elif char == 0x3F:  # `?`
            tokens.append(b"[^/]")
            i += 1
        elif char == 0x5B:  # `[`
            members, i = _bracket(pattern, i + 1, fold)
            tokens.append(_byte_class(members))
        else:
            tokens.append(re.escape(bytes([char])))
            i += 1
    return tokens


def _part(tokens: list[_Token]) -> bytes:
    """Regex for tokens without `**`: chunks of fixed width separated by `*`."""
    chunks: list[bytes] = [b""]
    for token in tokens:
        if isinstance(token, int):  # only `_STAR` reaches here
            chunks.append(b"")
        else:
            chunks[-1] += token
    out = chunks[0]
    # A chunk between two `*` is matched at its earliest position and committed: `*` cannot
    # cross `/`, so an earlier position never hurts, and `*a*a*a*…b` stays linear.
    for chunk in chunks[1:-1]:
        out += b"(?>[^/]*?" + chunk + b")"
    if len(chunks) > 1:
        out += b"[^/]*" + chunks[-1]
    return out


def _bracket(pattern: bytes, i: int, fold: bool) -> tuple[set[int], int]:
    """Parse a bracket expression as wildmatch does; `i` is just past the `[`.

    Returns the matching bytes and the index just past the closing `]`."""
    end = len(pattern)
    negated = i < end and pattern[i] in b"!^"
    if negated:
        i += 1
    members: set[int] = set()
    prev = 0
    while True:  # wildmatch's do-while: the first character is a member even when it is `]`
        if i >= end:
            raise _NeverMatches  # no closing `]`
        char = pattern[i]
        if char == 0x2D and prev and i + 1 < end and pattern[i + 1] != 0x5D:  # range `a-z`
            i += 1
            members.update(range(prev, pattern[i] + 1))
            char = 0  # a range ends the "previous character"
        elif char == 0x5B and i + 1 < end and pattern[i + 1] == 0x3A:  # `[:class:]`
            close = pattern.find(b"]", i + 2)
            if close < 0:
                raise _NeverMatches
            if close - (i + 2) < 1 or pattern[close - 1] != 0x3A:
                members.add(char)  # not a class after all: `[` is a plain member
            else:
                name = pattern[i + 2 : close - 1]
                if name not in _CLASSES:
                    raise _NeverMatches  # git aborts on an unknown class name
                # Case-insensitively the path is lowercased, so `upper` must accept letters.
                cls = _LETTERS if fold and name in (b"upper", b"lower") else _CLASSES[name]
                members.update(cls)
                i = close
                char = 0
        else:
            members.add(char)
        prev = char
        i += 1
        if i < end and pattern[i] == 0x5D:
            break
    if negated:
        members = set(range(256)) - members
    return members, i + 1


def _byte_class(members: set[int]) -> bytes:
    members = members - {0, _SLASH}  # git never matches `/` with a wildcard; paths have no NUL
    if not members:
        raise _NeverMatches
    ordered = sorted(members)
    ranges: list[bytes] = []
    start = last = ordered[0]
    for byte in [*ordered[1:], -1]:
        if byte == last + 1:
            last = byte
            continue
        ranges.append(b"\\x%02x" % start if start == last else b"\\x%02x-\\x%02x" % (start, last))
        start = last = byte
    return b"[" + b"".join(ranges) + b"]"


@functools.cache
def _no_rules() -> IgnoreRules:
    return IgnoreRules([], False)
