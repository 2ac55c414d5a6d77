"""The `.prayu/instructions.ignore` matcher: syntax, validation, limits, and agreement with git.

Real git is the reference. The differential tests write generated ignore files into a real
repository and compare `git check-ignore --no-index -v --non-matching` with `IgnoreRules`,
including git's deciding line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rutter_core.discovery.ignore import IGNORE_FILE, IgnoreMatch, IgnoreRules
from rutter_core.kernel.errors import DiscoveryError, RutterError


def rules(*lines: str, case_insensitive: bool = False) -> IgnoreRules:
    return IgnoreRules.parse(
        "".join(f"{line}\n" for line in lines).encode(), case_insensitive=case_insensitive
    )


def decided(rules_: IgnoreRules, path: str) -> int | None:
    """Line of the pattern that decides `path` when it is ignored, else None."""
    found = rules_.match(path)
    return None if found is None else found.line


def invalid(raw: bytes, *, max_bytes: int = 16384, max_patterns: int = 128) -> RutterError:
    with pytest.raises(RutterError) as caught:
        IgnoreRules.parse(raw, max_bytes=max_bytes, max_patterns=max_patterns)
    error = caught.value
    assert isinstance(error, DiscoveryError)
    assert error.code == "invalid_ignore"
    assert error.path == IGNORE_FILE
    assert IGNORE_FILE in error.message
    return error


# -- API -------------------------------------------------------------------------------------


def test_match_returns_line_and_pattern_as_written() -> None:
    ignore = rules("# private rules", "", ".prayu/rules/private.md")
    assert ignore.match(".prayu/rules/private.md") == IgnoreMatch(
        line=3, pattern=".prayu/rules/private.md"
    )
    assert ignore.match(".prayu/rules/public.md") is None
    assert ignore.pattern_count == 1


def test_ignore_match_is_frozen() -> None:
    found = IgnoreMatch(line=1, pattern="a")
    with pytest.raises(FrozenInstanceError):
        found.line = 2  # type: ignore[misc]


def test_empty_rules_ignore_nothing() -> None:
    empty = IgnoreRules.empty()
    assert empty.pattern_count == 0
    assert empty.match("AGENTS.md") is None
    assert empty.match("a/b/.prayu/rules/x.md") is None
    assert IgnoreRules.parse(b"").pattern_count == 0
    assert IgnoreRules.parse(b"# only a comment\n\n   \n").match("AGENTS.md") is None


def test_ignore_file_constant() -> None:
    assert IGNORE_FILE == ".prayu/instructions.ignore"


# -- syntax ----------------------------------------------------------------------------------


def test_comments_and_blank_lines_are_not_patterns() -> None:
    ignore = rules("#AGENTS.md", "", "  ", "\t", "CLAUDE.md")
    assert ignore.pattern_count == 1
    assert ignore.match("AGENTS.md") is None
    assert decided(ignore, "CLAUDE.md") == 5


def test_hash_after_leading_space_is_a_pattern() -> None:
    # Git: only a `#` in the first column starts a comment.
    ignore = rules(" #x")
    assert ignore.pattern_count == 1
    assert decided(ignore, "a/ #x") == 1


def test_name_without_slash_matches_at_any_depth() -> None:
    ignore = rules("CLAUDE.md")
    assert decided(ignore, "CLAUDE.md") == 1
    assert decided(ignore, "pkg/.claude/CLAUDE.md") == 1
    assert ignore.match("CLAUDE.md.bak") is None
    assert ignore.match("xCLAUDE.md") is None


def test_name_without_slash_also_matches_directories() -> None:
    ignore = rules("rules")
    assert decided(ignore, ".prayu/rules/go/style.md") == 1
    assert decided(ignore, "rules") == 1


def test_pattern_with_inner_slash_is_anchored_to_the_root() -> None:
    ignore = rules("rules/*.md")
    assert decided(ignore, "rules/a.md") == 1
    assert ignore.match(".prayu/rules/a.md") is None


def test_leading_slash_anchors() -> None:
    ignore = rules("/AGENTS.md")
    assert decided(ignore, "AGENTS.md") == 1
    assert ignore.match("services/AGENTS.md") is None


def test_star_stays_within_one_segment() -> None:
    ignore = rules(".prayu/rules/*.md")
    assert decided(ignore, ".prayu/rules/a.md") == 1
    assert decided(ignore, ".prayu/rules/.md") == 1
    assert ignore.match(".prayu/rules/go/a.md") is None


def test_star_in_a_name_pattern() -> None:
    ignore = rules("*.local.md", "draft*")
    assert decided(ignore, "x/notes.local.md") == 1
    assert decided(ignore, "drafts/AGENTS.md") == 2
    assert ignore.match("x/notes.md") is None


def test_leading_double_star() -> None:
    ignore = rules("**/private/*.md")
    assert decided(ignore, "private/a.md") == 1
    assert decided(ignore, "x/y/private/a.md") == 1
    assert ignore.match("x/private/y/a.md") is None


def test_middle_double_star_matches_zero_or_more_directories() -> None:
    ignore = rules(".prayu/**/secret.md")
    assert decided(ignore, ".prayu/secret.md") == 1
    assert decided(ignore, ".prayu/rules/secret.md") == 1
    assert decided(ignore, ".prayu/rules/a/b/secret.md") == 1
    assert ignore.match("x/.prayu/secret.md") is None


def test_trailing_double_star_matches_everything_inside() -> None:
    ignore = rules(".prayu/rules/**")
    assert decided(ignore, ".prayu/rules/a.md") == 1
    assert decided(ignore, ".prayu/rules/a/b/c.md") == 1
    assert ignore.match(".prayu/instructions.md") is None


def test_double_star_alone_matches_everything() -> None:
    assert decided(rules("**"), "a/b/AGENTS.md") == 1
    assert decided(rules("/**"), "AGENTS.md") == 1
    ignore = rules("**/")
    assert decided(ignore, "a/AGENTS.md") == 1
    assert ignore.match("AGENTS.md") is None


def test_question_mark_matches_one_byte_but_not_a_slash() -> None:
    ignore = rules("a?c.md", "/b?c")
    assert decided(ignore, "abc.md") == 1
    assert ignore.match("ac.md") is None
    assert ignore.match("a/c.md") is None
    assert decided(ignore, "bxc") == 2
    assert ignore.match("b/c") is None
    # Like git, `?` is one byte: a two-byte UTF-8 character needs `??`.
    assert rules("?.md").match("é.md") is None
    assert decided(rules("??.md"), "é.md") == 1


def test_bracket_expressions() -> None:
    ignore = rules("[ab].md", "[!ab]x.md", "[^ab]y.md", "[c-e]z.md", "[]]w.md", "[a-]v.md")
    assert decided(ignore, "a.md") == 1
    assert ignore.match("c.md") is None
    assert decided(ignore, "cx.md") == 2
    assert ignore.match("ax.md") is None
    assert decided(ignore, "cy.md") == 3
    assert ignore.match("by.md") is None
    assert decided(ignore, "dz.md") == 4
    assert ignore.match("fz.md") is None
    assert decided(ignore, "]w.md") == 5
    assert decided(ignore, "-v.md") == 6


def test_bracket_never_matches_a_slash() -> None:
    ignore = rules("a[!x]b", "c[/]d/e", "/f[!x]g")
    assert ignore.match("a/b") is None
    assert decided(ignore, "azb") == 1
    assert ignore.match("c/d/e") is None
    assert ignore.match("f/g") is None
    assert decided(ignore, "fzg") == 3


def test_dash_is_literal_at_the_edges_of_a_bracket() -> None:
    ignore = rules("[-a]x", "[a-]y", "[!-]z")
    assert decided(ignore, "-x") == 1
    assert decided(ignore, "ax") == 1
    assert ignore.match("0x") is None  # `[-a]` is not a range from NUL to `a`
    assert decided(ignore, "-y") == 2
    assert ignore.match("-z") is None
    assert decided(ignore, "qz") == 3


def test_character_classes() -> None:
    ignore = rules("[[:digit:]]*.md", "[[:upper:]][[:lower:]]")
    assert decided(ignore, "1.md") == 1
    assert ignore.match("a.md") is None
    assert decided(ignore, "x/Ab") == 2
    assert ignore.match("x/aB") is None


def test_unclosed_bracket_or_unknown_class_matches_nothing_but_counts() -> None:
    ignore = rules("[ab", "[[:nope:]]", "AGENTS.md")
    assert ignore.pattern_count == 3
    assert ignore.match("[ab") is None
    assert decided(ignore, "AGENTS.md") == 3


def test_trailing_slash_matches_directories_only() -> None:
    ignore = rules("pkg/")
    assert decided(ignore, "pkg/.claude/CLAUDE.md") == 1
    assert decided(ignore, "services/pkg/AGENTS.md") == 1
    assert ignore.match("pkg") is None  # a file named pkg
    assert ignore.match("services/pkg") is None


def test_anchored_directory_pattern() -> None:
    ignore = rules("/services/api/")
    assert decided(ignore, "services/api/AGENTS.md") == 1
    assert decided(ignore, "services/api/v1/.prayu/instructions.md") == 1
    assert ignore.match("x/services/api/AGENTS.md") is None


def test_negation_re_includes() -> None:
    ignore = rules(".prayu/rules/*.md", "!.prayu/rules/keep.md")
    assert decided(ignore, ".prayu/rules/drop.md") == 1
    assert ignore.match(".prayu/rules/keep.md") is None


def test_last_matching_pattern_decides() -> None:
    ignore = rules("*.md", "!AGENTS.md", "services/**/AGENTS.md")
    assert decided(ignore, "CLAUDE.md") == 1
    assert ignore.match("AGENTS.md") is None
    assert decided(ignore, "services/api/AGENTS.md") == 3
    assert ignore.match("x/AGENTS.md") is None
    twice = rules("AGENTS.md", "AGENTS.md")
    assert decided(twice, "AGENTS.md") == 2


def test_last_line_wins_across_literal_and_wildcard_lines() -> None:
    # Literal lines and wildcard lines are looked up separately; the later line must still win.
    ignore = rules("*.md", "/x.md", "q*", "x.md", "!/x.md", "[x].md")
    assert decided(ignore, "x.md") == 6
    assert rules("*.md", "/x.md", "q*").match("x.md") == IgnoreMatch(2, "/x.md")
    assert rules("/x.md", "*.md", "x.md", "?.md", "a*").match("x.md") == IgnoreMatch(4, "?.md")
    assert rules("x*", "*.md", "/x.md").match("x.md") == IgnoreMatch(3, "/x.md")
    assert decided(rules("*/x.md", "x.md", "a/*"), "a/x.md") == 3
    assert decided(rules("a/*", "*/x.md", "x.md"), "a/x.md") == 3


def test_file_in_ignored_directory_cannot_be_re_included() -> None:
    # Git never looks inside an excluded directory: the directory's line decides.
    ignore = rules("vendor/", "!vendor/AGENTS.md")
    assert ignore.match("vendor/AGENTS.md") == IgnoreMatch(line=1, pattern="vendor/")
    assert decided(rules("vendor", "!vendor/AGENTS.md"), "vendor/AGENTS.md") == 1
    assert decided(rules(".prayu/", "!.prayu/rules/a.md"), ".prayu/rules/a.md") == 1


def test_re_including_the_directory_lets_its_files_through() -> None:
    ignore = rules("vendor/*", "!vendor/AGENTS.md")
    assert ignore.match("vendor/AGENTS.md") is None
    assert decided(ignore, "vendor/CLAUDE.md") == 1
    reopened = rules("vendor/", "!vendor/")
    assert reopened.match("vendor/AGENTS.md") is None


def test_topmost_excluded_directory_decides() -> None:
    ignore = rules("a/", "a/b/")
    assert ignore.match("a/b/AGENTS.md") == IgnoreMatch(line=1, pattern="a/")
    ignore = rules("b/", "a/")
    assert decided(ignore, "a/b/AGENTS.md") == 2


def test_negated_parent_does_not_decide_for_the_file() -> None:
    ignore = rules("a/", "!/a", "*.md")
    assert decided(ignore, "a/b/c.md") == 3
    assert rules("a/", "!/a").match("a/b/c.md") is None


def test_git_prefix_double_star_quirks() -> None:
    # Git hands wildmatch only what follows the pattern's literal prefix, so a `**` right after
    # that prefix acts as if it followed a `/`. We reproduce git, not the documentation.
    ignore = rules("x/ab**/c")
    assert decided(ignore, "x/abc") == 1
    assert decided(ignore, "x/ab/q/c") == 1
    assert decided(rules("x/b**"), "x/b/c/d") == 1
    assert decided(rules("x/b**"), "x/b") == 1
    # Elsewhere `**` next to other characters is a plain `*`.
    assert rules("a/**b").match("a/x/b") is None
    assert decided(rules("a/**b"), "a/xb") == 1


def test_trailing_spaces_are_stripped_but_tabs_are_kept() -> None:
    ignore = rules("AGENTS.md  ", "CLAUDE.md\t")
    assert ignore.match("AGENTS.md") == IgnoreMatch(line=1, pattern="AGENTS.md")
    assert ignore.match("CLAUDE.md") is None
    assert decided(ignore, "CLAUDE.md\t") == 2


def test_leading_spaces_are_part_of_the_pattern() -> None:
    ignore = rules(" AGENTS.md")
    assert ignore.match("AGENTS.md") is None
    assert decided(ignore, " AGENTS.md") == 1


def test_lone_bang_and_lone_slash_match_nothing() -> None:
    ignore = rules("!", "/", "//AGENTS.md")
    assert ignore.pattern_count == 3
    assert ignore.match("AGENTS.md") is None


def test_dots_that_are_not_a_parent_segment_are_allowed() -> None:
    ignore = rules("...", "a..b/", ".hidden.md")
    assert decided(ignore, "x/...") == 1
    assert decided(ignore, "a..b/AGENTS.md") == 2
    assert decided(ignore, ".hidden.md") == 3


# -- encoding, line endings ------------------------------------------------------------------


def test_bom_is_stripped_and_line_one_stays_line_one() -> None:
    ignore = IgnoreRules.parse(b"\xef\xbb\xbfAGENTS.md\n")
    assert ignore.match("AGENTS.md") == IgnoreMatch(line=1, pattern="AGENTS.md")
    comment = IgnoreRules.parse(b"\xef\xbb\xbf#AGENTS.md\n")
    assert comment.pattern_count == 0


def test_crlf_line_endings() -> None:
    ignore = IgnoreRules.parse(b"# c\r\n\r\nAGENTS.md \r\n!x/AGENTS.md\r\nCLAUDE.md")
    assert ignore.pattern_count == 3
    assert ignore.match("AGENTS.md") == IgnoreMatch(line=3, pattern="AGENTS.md")
    assert ignore.match("x/AGENTS.md") is None
    assert ignore.match("CLAUDE.md") == IgnoreMatch(line=5, pattern="CLAUDE.md")


def test_cr_at_end_of_file_without_newline() -> None:
    assert IgnoreRules.parse(b"AGENTS.md\r").match("AGENTS.md") == IgnoreMatch(1, "AGENTS.md")


def test_utf8_patterns() -> None:
    ignore = rules("règles/", "📝*.md")
    assert decided(ignore, "règles/a.md") == 1
    assert decided(ignore, "x/📝notes.md") == 2


# -- case ------------------------------------------------------------------------------------


@pytest.mark.skipif(os.name == "nt", reason="Linux and macOS keep case")
def test_case_sensitive_by_default_off_windows() -> None:
    ignore = IgnoreRules.parse(b"agents.md\n")
    assert ignore.match("AGENTS.md") is None


def test_case_insensitive_matching() -> None:
    ignore = rules(
        "agents.md", "/Services/API/", ".PRAYU/rules/*.MD", "[A-C]x", "ÉTÉ/", case_insensitive=True
    )
    assert decided(ignore, "pkg/AGENTS.md") == 1
    assert decided(ignore, "services/api/CLAUDE.md") == 2
    assert decided(ignore, ".prayu/RULES/go.md") == 3
    assert decided(ignore, "bX") == 4
    assert decided(ignore, "été/AGENTS.md") == 5
    # The reported pattern is the line as written, not lowered.
    assert ignore.match("AGENTS.md") == IgnoreMatch(line=1, pattern="agents.md")
    assert rules("agents.md").match("AGENTS.md") is None


# -- invalid files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    ["..", "../AGENTS.md", "a/../b", "!../x", "a/..", "/../x", "a/../", "x/.."],
)
def test_parent_segment_is_invalid(line: str) -> None:
    error = invalid(f"# ok\nAGENTS.md\n{line}\nCLAUDE.md\n".encode())
    assert error.details == {"line": 3}
    assert error.message.startswith(f"line 3 of {IGNORE_FILE} contains a `..` segment")
    assert "remove the `..`" in error.message


@pytest.mark.parametrize("line", ["\\#AGENTS.md", "\\!x", "a\\b", "rules\\*.md", "x\\"])
def test_backslash_is_invalid(line: str) -> None:
    error = invalid(f"a\n{line}\n".encode())
    assert error.details == {"line": 2}
    assert "line 2" in error.message
    assert "backslash" in error.message


def test_nul_is_invalid_with_its_line() -> None:
    error = invalid(b"a\nb\n\nc\x00d\n")
    assert error.details == {"line": 4}
    assert "NUL" in error.message


def test_nul_in_a_comment_is_invalid_too() -> None:
    assert invalid(b"# x\x00\n").details == {"line": 1}


@pytest.mark.parametrize("line", ["C:", "c:/x", "C:/Users/me/AGENTS.md", "!D:x", "/c:/x", "z:"])
def test_drive_letter_is_invalid(line: str) -> None:
    error = invalid(f"a\nb\n{line}\n".encode())
    assert error.details == {"line": 3}
    assert "drive letter" in error.message


def test_colon_elsewhere_is_allowed() -> None:
    ignore = rules("ab:c", "x/c:")
    assert decided(ignore, "ab:c") == 1


def test_invalid_utf8_reports_the_line_of_the_first_bad_byte() -> None:
    error = invalid(b"a\nb\n\nok \xff\xfe\nalso \xc3\n")
    assert error.details == {"line": 4}
    assert "UTF-8" in error.message
    assert invalid(b"\xc3(\n").details == {"line": 1}
    assert invalid(b"# comment \xe9\n").details == {"line": 1}


def test_earliest_invalid_line_is_reported() -> None:
    assert invalid(b"a\n../x\n\xff\n").details == {"line": 2}
    assert invalid(b"a\n\xff\n../x\n").details == {"line": 2}


def test_backslash_or_parent_in_a_comment_is_allowed() -> None:
    # Comments never match anything; only pattern lines are checked.
    ignore = rules("# see ..\\docs", "AGENTS.md")
    assert decided(ignore, "AGENTS.md") == 2


def test_size_limit_exactly_at_the_bound_is_valid() -> None:
    raw = b"# " + b"x" * 97 + b"\n"
    assert len(raw) == 100
    assert IgnoreRules.parse(raw, max_bytes=100).pattern_count == 0


def test_size_limit_one_over_is_invalid_without_a_line() -> None:
    raw = b"# " + b"x" * 98 + b"\n"
    error = invalid(raw, max_bytes=100)
    assert error.details == {}
    assert "line" not in error.to_json().get("details", {})
    assert "101 bytes" in error.message
    assert "100-byte limit" in error.message


def test_default_size_limit_is_16_kib() -> None:
    at_limit = b"#" * 16383 + b"\n"
    assert IgnoreRules.parse(at_limit).pattern_count == 0
    invalid(at_limit + b"\n")


def test_bom_counts_towards_the_size_limit() -> None:
    invalid(b"\xef\xbb\xbf" + b"#" * 98, max_bytes=100)


def test_pattern_limit_exactly_at_the_bound_is_valid() -> None:
    lines = ["# header", ""] + [f"p{i}" for i in range(128)] + ["# trailer", "   "]
    ignore = rules(*lines)
    assert ignore.pattern_count == 128
    assert decided(ignore, "p127") == 130


def test_pattern_limit_one_over_reports_the_first_line_over() -> None:
    lines = ["# header", ""] + [f"p{i}" for i in range(129)]
    error = invalid("\n".join(lines).encode())
    assert error.details == {"line": 131}
    assert "128-pattern limit" in error.message


def test_custom_pattern_limit() -> None:
    assert IgnoreRules.parse(b"a\n#\nb\n", max_patterns=2).pattern_count == 2
    assert invalid(b"a\n#\nb\n\nc\n", max_patterns=2).details == {"line": 5}


def test_never_matching_lines_count_as_patterns() -> None:
    assert invalid(b"[\n!\n/\n", max_patterns=2).details == {"line": 3}


def test_error_json_shape() -> None:
    body = invalid(b"ok\n../x\n").to_json()
    assert body["code"] == "invalid_ignore"
    assert body["path"] == IGNORE_FILE
    assert body["details"] == {"line": 2}
    assert body["message"] == (
        f"line 2 of {IGNORE_FILE} contains a `..` segment; patterns are workspace-relative and "
        "cannot escape the workspace — remove the `..`"
    )


# -- cost ------------------------------------------------------------------------------------


ADVERSARIAL = """
import time
from rutter_core.discovery.ignore import IgnoreRules

ignore = IgnoreRules.parse(
    b"*a*a*a*a*a*a*a*a*a*a*a*a*b\\n"
    + b"/".join([b"**/a"] * 12) + b"/**/b\\n"
    + b"x/" + b"*a" * 12 + b"*b/**\\n"
    + b"[a-z]*" * 10 + b"!\\n"
)
start = time.perf_counter()
assert ignore.match("a" * 250 + "/" + "a" * 250) is None
assert ignore.match("/".join(["a"] * 64) + "/c") is None
assert ignore.match("x/" + "a" * 250 + "/c") is None
assert ignore.match("q/" + "a" * 250) is None
print(time.perf_counter() - start)
"""


def test_adversarial_patterns_do_not_backtrack_exponentially() -> None:
    # A workspace's ignore file is untrusted input, and a regex engine cannot be interrupted:
    # run in a child process so that a regression fails by timeout instead of hanging the suite.
    done = subprocess.run(
        [sys.executable, "-c", ADVERSARIAL], capture_output=True, text=True, timeout=30, check=True
    )
    assert float(done.stdout) < 0.5


def test_match_is_cheap_with_the_maximum_number_of_patterns() -> None:
    kinds = ["svc{}/AGENTS.md", "*.tmp{}", "/build{}/", "**/gen{}/**", "!keep{}.md", "x*y{}*z"]
    ignore = rules(*(kinds[i % len(kinds)].format(i) for i in range(128)))
    paths = ["AGENTS.md", "services/api/AGENTS.md", ".prayu/rules/go/style.md"]
    start = time.perf_counter()
    for _ in range(300):
        for path in paths:
            ignore.match(path)
    per_call = (time.perf_counter() - start) / 900
    assert per_call < 500e-6  # loose: catches a pathological slowdown, not a benchmark


# -- differential: real git is the reference -------------------------------------------------

GIT = shutil.which("git")

PATTERN_SEGMENTS = [
    "a", "b", "ab", "A", "*", "**", "?", "??", "*.md", "a*", "*b", "*a*", "a**", "**b", "a?",
    "[ab]", "[!a]", "[^b]", "[a-c]*", "[[:alpha:]]", "[[:upper:]]*", "[", "[]", "]", "x.md",
    ".prayu", "rules", "AGENTS.md", "*.MD", "é", ".", "...", "a?b", "a[!x]b", "a*b", "[-a]",
    "[!-]", "[]a]", "[[:digit:]]", "**a", "b**", "x.md**",
]  # fmt: skip
PATH_NAMES = [
    "a", "b", "ab", "ba", "A", "aa", "x.md", "b.MD", ".md", "AGENTS.md", ".prayu", "rules", "é",
    "[ab]", "a b", "...", "-", "1", "]",
]  # fmt: skip
# Paths checked in every example on top of the drawn ones (one git call checks them all).
BASE_PATHS = [
    *PATH_NAMES,
    *(f"{d}/{n}" for d in ("a", "b", "ab", ".prayu", "x.md") for n in PATH_NAMES),
    *(f"{d}/rules/{n}" for d in ("a", ".prayu") for n in ("x.md", "a", "b.MD")),
    "a/b/a/b/x.md",
    "ab/a/b/a",
]


@st.composite
def pattern_lines(draw: st.DrawFn, segments: list[str]) -> str:
    body = "/".join(draw(st.lists(st.sampled_from(segments), min_size=1, max_size=4)))
    lead = draw(st.sampled_from(["", "", "/", "!", "!/", "**/", "!**/", "//"]))
    trail = draw(st.sampled_from(["", "", "/", "/**", "/*"]))
    spaces = draw(st.sampled_from(["", "", " ", "  ", "\t"]))
    return lead + body + trail + spaces


def ignore_files(segments: list[str]) -> st.SearchStrategy[bytes]:
    line = st.one_of(
        pattern_lines(segments),
        pattern_lines(segments),
        pattern_lines(segments),
        st.sampled_from(["", "# comment", "#a", "   ", "!", "/", "*", "**", "**/", "*/", "!*"]),
    )

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        lines = draw(st.lists(line, min_size=1, max_size=10))
        eol = draw(st.sampled_from(["\n", "\r\n"]))
        text = eol.join(lines) + draw(st.sampled_from([eol, ""]))
        bom = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
        return bom + text.encode()

    return build()


drawn_paths = st.lists(
    st.lists(st.sampled_from(PATH_NAMES), min_size=1, max_size=5).map("/".join),
    max_size=12,
)


class Git:
    """`git check-ignore` in a scratch repository, isolated from any user or system config."""

    def __init__(self, root: Path) -> None:
        assert GIT is not None
        self.root = root
        home = root / "home"
        home.mkdir()
        self.repo = root / "repo"
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
        templates = root / "templates"
        templates.mkdir()
        self.run("init", "-q", f"--template={templates}", str(self.repo), cwd=root)

    def run(self, *args: str, cwd: Path, stdin: bytes = b"") -> bytes:
        assert GIT is not None
        done = subprocess.run(
            [GIT, *args], cwd=cwd, env=self.env, input=stdin, capture_output=True, check=False
        )
        # check-ignore exits 1 when nothing is ignored; anything else is a broken run.
        assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
        return done.stdout

    def check_ignore(
        self, ignore: bytes, paths: list[str], *, ignorecase: bool = False
    ) -> dict[str, tuple[int, str] | None]:
        """For each path: (line, pattern) of the pattern git reports (`!` ones included)."""
        return self.check_ignore_many([ignore], paths, ignorecase=ignorecase)[0]

    def check_ignore_many(
        self, ignores: list[bytes], paths: list[str], *, ignorecase: bool = False
    ) -> list[dict[str, tuple[int, str] | None]]:
        """`check_ignore` for several ignore files with one git process (starting git costs
        more than checking hundreds of paths). Ignore file i is `d{i}/.gitignore` and path p
        is asked as `d{i}/p`: git matches a directory's `.gitignore` relative to that
        directory exactly like the root one, and uses only the files on a path's own chain."""
        for i, ignore in enumerate(ignores):
            (self.repo / f"d{i}").mkdir(exist_ok=True)
            (self.repo / f"d{i}" / ".gitignore").write_bytes(ignore)
        # The candidate files are not created: git checks every parent as a directory and a
        # missing leaf as a non-directory, exactly how it treats a real file there, and this lets
        # `a` be a file in one path and a directory in another.
        asked = [f"d{i}/{path}" for i in range(len(ignores)) for path in paths]
        out = self.run(
            "-c",
            f"core.ignorecase={'true' if ignorecase else 'false'}",
            "-c",
            f"core.excludesFile={os.devnull}",
            "check-ignore",
            "--no-index",
            "--verbose",
            "--non-matching",
            "-z",
            "--stdin",
            cwd=self.repo,
            stdin=b"".join(os.fsencode(p) + b"\0" for p in asked),
        )
        fields = out.split(b"\0")
        assert fields[-1] == b""
        verdicts: list[dict[str, tuple[int, str] | None]] = [{} for _ in ignores]
        for at in range(0, len(fields) - 1, 4):
            source, line, pattern, full = fields[at : at + 4]
            directory, _, path = os.fsdecode(full).partition("/")
            index = int(directory.removeprefix("d"))
            if source:
                assert source == f"{directory}/.gitignore".encode()
                verdicts[index][path] = (int(line), pattern.decode())
            else:
                verdicts[index][path] = None
        for found in verdicts:
            assert sorted(found) == sorted(set(paths))
        return verdicts


@pytest.fixture(scope="module")
def git(tmp_path_factory: pytest.TempPathFactory) -> Git:
    if GIT is None:
        pytest.skip("git is not installed; the differential tests need it as the reference")
    return Git(tmp_path_factory.mktemp("git"))


Decide = Callable[[str], "tuple[int, str] | None"]


def assert_same_verdicts(
    decide: Decide, expected: dict[str, tuple[int, str] | None], raw: bytes
) -> None:
    for path, verdict in expected.items():
        got = decide(path)
        assert got == verdict, f"{path!r} with {raw!r}: git says {verdict}, we say {got}"


def assert_agrees_with_git(
    git: Git, raw: bytes | list[bytes], paths: list[str], *, case_insensitive: bool = False
) -> None:
    raws = raw if isinstance(raw, list) else [raw]
    expected_per_file = git.check_ignore_many(raws, paths, ignorecase=case_insensitive)
    for one, expected in zip(raws, expected_per_file, strict=True):
        ignore = IgnoreRules.parse(one, case_insensitive=case_insensitive)

        def decide(path: str, ignore: IgnoreRules = ignore) -> tuple[int, str] | None:
            rule = ignore._decide(path)
            return None if rule is None else (rule.match.line, rule.match.pattern)

        assert_same_verdicts(decide, expected, one)
        for path, verdict in expected.items():
            if verdict is None or verdict[1].startswith("!"):
                assert ignore.match(path) is None, path
            else:
                assert ignore.match(path) == IgnoreMatch(*verdict), path


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raws=st.lists(ignore_files(PATTERN_SEGMENTS), min_size=1, max_size=4), extra=drawn_paths)
def test_agrees_with_git_check_ignore(git: Git, raws: list[bytes], extra: list[str]) -> None:
    assert_agrees_with_git(git, raws, BASE_PATHS + extra)


# Git's case folding of `[...]` differs from its folding elsewhere (`[A]` matches neither `a`
# nor `A`), so the case-insensitive comparison leaves brackets out; non-ASCII is left out too
# because git folds ASCII only, while on Windows we fold like the file system.
CASELESS_SEGMENTS = [s for s in PATTERN_SEGMENTS if "[" not in s and "]" not in s and s != "é"]
CASELESS_SEGMENTS += ["AGENTS.MD", "Ab", ".PRAYU", "Rules"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raws=st.lists(ignore_files(CASELESS_SEGMENTS), min_size=1, max_size=4), extra=drawn_paths)
def test_case_insensitive_agrees_with_git(git: Git, raws: list[bytes], extra: list[str]) -> None:
    paths = [p for p in BASE_PATHS + extra if "é" not in p] + ["A/RULES/X.MD", ".Prayu/Ab"]
    assert_agrees_with_git(git, raws, paths, case_insensitive=True)


@pytest.mark.parametrize(
    "raw",
    [
        b"a/\n!a/x.md\n",
        b"a/\n!/a\n*.md\n",
        b"x/ab**/c\nx.md/b**\n",
        b"a[!x]b\n[[:upper:]]*\n",
        b"*.md\t\n a\n",
        b"\xef\xbb\xbf#c\r\na\r\n!a/b\r\n",
        b"**/\n!**/rules/\n",
        b"/**\n!*.md\n",
        b"?\n!??\n",
        b"/a?b\n/b[!x]a\n",
        b"x.md/**/**\n!**/a/**\n",
    ],
)
def test_known_git_edge_cases(git: Git, raw: bytes) -> None:
    extra = ["x/abc", "x/ab/q/c", "x.md/b/c/d", "a/x.md", "azb", "a/b", "Ab", "a\t", " a"]
    assert_agrees_with_git(git, raw, BASE_PATHS + extra)


BRACKETS = [
    *(f"[[:{name}:]]" for name in ("alnum", "alpha", "blank", "cntrl", "digit", "graph")),
    *(f"[[:{name}:]]" for name in ("lower", "print", "punct", "space", "upper", "xdigit")),
    "[![:alpha:]]", "[^[:space:]]", "[[:alpha:]0-9_]", "[[:alpha:]-z]", "[[:digit:][:upper:]]",
    "[a-z]", "[!a-z]", "[z-a]", "[]-a]", "[!]]", "[-a]", "[a-]", "[+--]", "[[:]", "[[:a]",
    "[[:alpha:]", "[[:nope:]]", "[[::]]", "[[]", "[]]", "[!]", "[", "?", "[?*]", "[!!]", "[^^]",
]  # fmt: skip


def test_brackets_agree_with_git_for_every_byte(git: Git) -> None:
    # One line per bracket expression, each behind its own prefix so that no two lines can
    # match the same path; every byte but NUL and `/` (non-UTF-8 ones via surrogateescape).
    raw = "".join(f"p{i}{bracket}\n" for i, bracket in enumerate(BRACKETS)).encode()
    chars = [os.fsdecode(bytes([b])) for b in range(1, 256) if b != 0x2F]
    paths = [f"p{i}{char}" for i in range(len(BRACKETS)) for char in chars]
    assert_agrees_with_git(git, raw, paths)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (b"a/\n!a/x.md\n", "a/x.md"),  # a file in an excluded directory stays excluded
        (b"a/\n!/a\n", "a/b/x.md"),  # a `!` that re-includes a parent does not decide
        (b"a[!x]b\n", "a/b"),  # wildcards never match `/`
        (b"x/ab**/c\n", "x/abc"),  # git's `**` right after the literal prefix
        (b"AGENTS.md\t\n", "AGENTS.md"),  # git keeps trailing tabs
        (b"?.md\n", "é.md"),  # `?` is one byte, and `é` is two
    ],
)
def test_harness_catches_pathspec_disagreements(git: Git, raw: bytes, path: str) -> None:
    # pathspec's GitIgnoreSpec (the obvious implementation) disagrees with git on each of these,
    # which is why matching is done in rutter_core.discovery.ignore. This also shows the harness
    # can fail.
    lines = raw.decode().split("\n")
    spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def pathspec_decide(candidate: str) -> tuple[int, str] | None:
        index = spec.check_file(candidate).index
        return None if index is None else (index + 1, lines[index].rstrip(" "))

    expected = git.check_ignore(raw, [path])
    with pytest.raises(AssertionError):
        assert_same_verdicts(pathspec_decide, expected, raw)
    assert_agrees_with_git(git, raw, [path])
