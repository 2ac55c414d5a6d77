"""Discovery rules of docs/reference/discovery.md, one behaviour per test, on real directory
trees."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.layout import classify, precedence
from rutter_core.discovery.snapshot import Limits, Snapshot, snapshot_fingerprint
from rutter_core.discovery.targets import normalize_target
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import DiscoveryError, DiscoveryNotFoundError, RutterError
from tests.conftest import write_tree

TARGET = "internal/parser/input.go"


def run(root: Path, target: str = TARGET, **kwargs: object) -> Snapshot:
    reader = kwargs.pop("reader", None) or FileReader()
    assert isinstance(reader, FileReader)
    limits = kwargs.pop("limits", None) or Limits()
    assert isinstance(limits, Limits)
    return discover("demo", str(root), target, reader=reader, limits=limits)


def fails(root: Path, code: str, target: str = TARGET, **kwargs: object) -> RutterError:
    with pytest.raises(RutterError) as caught:
        run(root, target, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value


def paths(snapshot: Snapshot) -> list[str]:
    return [source.path for source in snapshot.sources]


# -- what is read, and in which order -------------------------------------------------------


def test_contract_example_root_agents(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root workflow\n", "internal/parser/input.go": "x"})
    snapshot = run(workspace_root)
    data = snapshot.to_json()
    assert data["protocol_version"] == "project_instruction_snapshot.v1"
    assert data["workspace_id"] == "demo"
    assert data["target_path"] == TARGET
    assert data["limits"] == {
        "max_files": 64,
        "max_file_bytes": 65536,
        "max_total_bytes": 262144,
        "max_depth": 32,
        "max_ignore_bytes": 16384,
        "max_ignore_patterns": 128,
    }
    [source] = data["sources"]
    assert source["ordinal"] == 1
    assert source["path"] == "AGENTS.md"
    assert source["kind"] == "agents"
    assert source["scope"] == "."
    assert source["depth"] == 0
    assert source["precedence"] == 0
    assert source["bytes"] == 14
    assert source["content"] == "root workflow\n"
    assert source["content_sha256"] == hashlib.sha256(b"root workflow\n").hexdigest()
    assert source["trust"] == "project_workflow_untrusted"
    assert source["applicable_to"] == [TARGET]
    assert source["why_effective"] == (
        "workspace-root AGENTS.md; inherited by internal/parser/input.go (depth 0)"
    )
    assert source["redacted"] is False
    assert source["redactions"] == []
    grants = {key: value for key, value in source["authority"].items() if value}
    assert grants == {
        "workflow_guidance": True,
        "formatting_guidance": True,
        "validation_guidance": True,
    }
    assert len(source["authority"]) == 16
    assert data["ignored"] == []
    assert data["conflicts"] == []
    assert len(data["fingerprint"]) == 64
    assert data["fingerprint"] == snapshot_fingerprint(data)


def test_full_level_order_and_precedence(workspace_root: Path) -> None:
    level = {
        "AGENTS.md": "agents\n",
        "CLAUDE.md": "claude\n",
        ".claude/CLAUDE.md": "claude dir\n",
        ".prayu/instructions.md": "prayu\n",
        ".prayu/rules/b.md": "rule b\n",
        ".prayu/rules/a/z.md": "rule a/z\n",
        ".prayu/rules/a.md": "rule a\n",
        ".prayu/rules/C.MD": "rule C upper\n",
    }
    files: dict[str, str | bytes] = dict(level)
    files.update({f"internal/{rel}": body for rel, body in level.items()})
    files["internal/parser/input.go"] = "x"
    write_tree(workspace_root, files)
    snapshot = run(workspace_root)
    per_level = [
        "AGENTS.md",
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        ".prayu/instructions.md",
        # byte order of the full path: "C.MD" < "a.md" < "a/z.md" < "b.md"
        ".prayu/rules/C.MD",
        ".prayu/rules/a.md",
        ".prayu/rules/a/z.md",
        ".prayu/rules/b.md",
    ]
    assert paths(snapshot) == per_level + [f"internal/{rel}" for rel in per_level]
    assert [source.precedence for source in snapshot.sources] == [
        0, 1, 2, 3, 10, 11, 12, 13, 100, 101, 102, 103, 110, 111, 112, 113
    ]  # fmt: skip
    assert [source.ordinal for source in snapshot.sources] == list(range(1, 17))
    kinds = [source.kind for source in snapshot.sources[:5]]
    assert kinds == ["agents", "claude", "claude_dir", "prayu_instructions", "prayu_rule"]
    assert {source.scope for source in snapshot.sources[8:]} == {"internal"}
    assert {source.depth for source in snapshot.sources[8:]} == {1}


def test_layout_classifies_each_delivered_source_as_the_walk_ranked_it(
    workspace_root: Path,
) -> None:
    """The editor classifies a file from its path alone (`layout.classify`): the same kind,
    scope and precedence the walk gives it (rules get their slot from their order)."""
    level = {
        "AGENTS.override.md": "override\n",
        "CLAUDE.md": "claude\n",
        ".claude/CLAUDE.md": "claude dir\n",
        ".prayu/instructions.md": "prayu\n",
        ".prayu/rules/a/z.MD": "rule\n",
    }
    files: dict[str, str | bytes] = {"AGENTS.md": "root\n"}
    files.update({f"internal/parser/{rel}": body for rel, body in level.items()})
    files[TARGET] = "x"
    write_tree(workspace_root, files)
    snapshot = run(workspace_root)
    assert len(snapshot.sources) == 6
    for source in snapshot.sources:
        file = classify(source.path)
        assert file is not None, source.path
        assert (file.kind, file.level, file.depth) == (source.kind, source.scope, source.depth)
        if source.kind == "prayu_rule":
            assert file.precedence is None
        else:
            assert file.precedence == source.precedence == precedence(source.depth, file.slot or 0)
    for other in (TARGET, "internal/.prayu/rules/notes.txt", "internal/.claude/settings.json",
                  "internal/.prayu/other.md", "docs/agents.md"):  # fmt: skip
        assert classify(other) is None, other
    ignore = classify(".prayu/instructions.ignore")
    assert ignore is not None
    assert (ignore.kind, ignore.is_source) == ("ignore_file", False)


def test_only_the_ancestor_chain_is_read(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "root\n",
            "internal/AGENTS.md": "internal\n",
            "internal/other/AGENTS.md": "sibling\n",
            "internal/parser/deeper/AGENTS.md": "below the target\n",
            "cmd/AGENTS.md": "elsewhere\n",
            "internal/parser/input.go": "x",
        },
    )
    assert paths(run(workspace_root)) == ["AGENTS.md", "internal/AGENTS.md"]


def test_directory_target_includes_its_own_level(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "internal/parser/AGENTS.md": "parser\n"})
    snapshot = run(workspace_root, "internal/parser")
    assert paths(snapshot) == ["AGENTS.md", "internal/parser/AGENTS.md"]
    assert snapshot.target_path == "internal/parser"
    assert "applies to internal/parser itself" in snapshot.sources[1].why_effective


def test_root_target_and_missing_target_file(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n", "internal/AGENTS.md": "i\n"})
    assert paths(run(workspace_root, ".")) == ["AGENTS.md"]
    with pytest.raises(RutterError) as empty:  # issue 18: '' is not the whole workspace
        run(workspace_root, "")
    assert empty.value.code == "invalid_target"
    # A file not written yet still gets its directory's instructions.
    assert paths(run(workspace_root, "internal/new.go")) == ["AGENTS.md", "internal/AGENTS.md"]


def test_no_instructions_at_all(workspace_root: Path) -> None:
    write_tree(workspace_root, {"internal/parser/input.go": "x"})
    snapshot = run(workspace_root)
    assert snapshot.sources == []
    assert snapshot.ignored == []
    assert snapshot.conflicts == []


def test_file_names_are_case_sensitive(workspace_root: Path) -> None:
    write_tree(
        workspace_root, {"agents.md": "lower\n", "Claude.md": "mixed\n", "AGENTS.md": "yes\n"}
    )
    assert paths(run(workspace_root, "x.go")) == ["AGENTS.md"]


def test_non_markdown_files_in_rules_are_not_rules(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {".prayu/rules/a.md": "a\n", ".prayu/rules/notes.txt": "t\n", ".prayu/rules/x.mdx": "m\n"},
    )
    assert paths(run(workspace_root, "x.go")) == [".prayu/rules/a.md"]


def test_claude_dir_scope_is_the_directory_holding_it(workspace_root: Path) -> None:
    write_tree(workspace_root, {"internal/.claude/CLAUDE.md": "c\n"})
    [source] = run(workspace_root, "internal/x.go").sources
    assert source.kind == "claude_dir"
    assert source.scope == "internal"
    assert source.precedence == 102
    assert "its scope is internal, the directory holding .claude/" in source.why_effective


def test_control_file_is_never_a_source(workspace_root: Path) -> None:
    write_tree(workspace_root, {".prayu/instructions.ignore": "# nothing\n"})
    assert run(workspace_root, "x.go").sources == []


def test_ignore_file_below_root_is_not_read(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {"internal/.prayu/instructions.ignore": "AGENTS.md\n", "internal/AGENTS.md": "i\n"},
    )
    assert paths(run(workspace_root, "internal/x.go")) == ["internal/AGENTS.md"]


# -- override and ignore ----------------------------------------------------------------------


def test_non_blank_override_supersedes_agents(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "base\n", "AGENTS.override.md": "override\n"})
    snapshot = run(workspace_root, "x.go")
    [source] = snapshot.sources
    assert (source.path, source.kind, source.precedence) == (
        "AGENTS.override.md",
        "agents_override",
        0,
    )
    assert "replaces AGENTS.md" in source.why_effective
    assert [entry.model_dump(exclude_none=True) for entry in snapshot.ignored] == [
        {"path": "AGENTS.md", "reason": "superseded", "superseded_by": "AGENTS.override.md"}
    ]


def test_override_without_agents(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.override.md": "override\n"})
    snapshot = run(workspace_root, "x.go")
    assert paths(snapshot) == ["AGENTS.override.md"]
    assert snapshot.ignored == []


@pytest.mark.parametrize("blank", ["", " \n\t\r\n", "\ufeff\n"])
def test_blank_override_falls_back(workspace_root: Path, blank: str) -> None:
    write_tree(workspace_root, {"AGENTS.md": "base\n", "AGENTS.override.md": blank})
    snapshot = run(workspace_root, "x.go")
    assert paths(snapshot) == ["AGENTS.md"]
    assert [entry.model_dump(exclude_none=True) for entry in snapshot.ignored] == [
        {"path": "AGENTS.override.md", "reason": "blank_override"}
    ]
    assert "used because AGENTS.override.md is blank" in snapshot.sources[0].why_effective


def test_blank_override_alone_delivers_nothing(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.override.md": "\n"})
    snapshot = run(workspace_root, "x.go")
    assert snapshot.sources == []
    assert [entry.reason for entry in snapshot.ignored] == ["blank_override"]


def test_ignored_override_falls_back(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "base\n",
            "AGENTS.override.md": "override\n",
            ".prayu/instructions.ignore": "# comment\nAGENTS.override.md\n",
        },
    )
    snapshot = run(workspace_root, "x.go")
    assert paths(snapshot) == ["AGENTS.md"]
    assert [entry.model_dump(exclude_none=True) for entry in snapshot.ignored] == [
        {
            "path": "AGENTS.override.md",
            "reason": "ignore_file",
            "line": 2,
            "pattern": "AGENTS.override.md",
        }
    ]
    assert "excluded by .prayu/instructions.ignore:2" in snapshot.sources[0].why_effective


def test_ignore_file_patterns(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            ".prayu/instructions.ignore": "\n".join(
                [".prayu/rules/drafts/", "**/CLAUDE.md", "!internal/CLAUDE.md", ""]
            ),
            ".prayu/rules/keep.md": "k\n",
            ".prayu/rules/drafts/wip.md": "w\n",
            "CLAUDE.md": "root claude\n",
            "internal/CLAUDE.md": "internal claude\n",
            "internal/.claude/CLAUDE.md": "hidden claude\n",
            "internal/parser/input.go": "x",
        },
    )
    snapshot = run(workspace_root)
    assert paths(snapshot) == [".prayu/rules/keep.md", "internal/CLAUDE.md"]
    assert [(entry.path, entry.line) for entry in snapshot.ignored] == [
        ("CLAUDE.md", 2),
        (".prayu/rules/drafts/wip.md", 1),
        ("internal/.claude/CLAUDE.md", 2),
    ]


def test_ignored_entries_only_for_existing_files(workspace_root: Path) -> None:
    write_tree(workspace_root, {".prayu/instructions.ignore": "AGENTS.md\nCLAUDE.md\n"})
    assert run(workspace_root, "x.go").ignored == []


def test_ignored_symlink_is_not_followed_or_refused(workspace_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret plans\n")
    write_tree(workspace_root, {".prayu/instructions.ignore": "CLAUDE.md\n"})
    (workspace_root / "CLAUDE.md").symlink_to(outside)
    snapshot = run(workspace_root, "x.go")
    assert snapshot.sources == []
    assert [entry.path for entry in snapshot.ignored] == ["CLAUDE.md"]


@pytest.mark.parametrize(
    ("ignore", "line"),
    [
        ("ok.md\n../escape.md\n", 2),
        ("a\\b.md\n", 1),
        ("C:/x.md\n", 1),
        ("x\x00.md\n", 1),
    ],
)
def test_invalid_ignore_fails_with_line(workspace_root: Path, ignore: str, line: int) -> None:
    write_tree(workspace_root, {".prayu/instructions.ignore": ignore, "AGENTS.md": "a\n"})
    error = fails(workspace_root, "invalid_ignore", "x.go")
    assert error.path == ".prayu/instructions.ignore"
    assert error.details.get("line") == line


def test_ignore_file_bounds(workspace_root: Path) -> None:
    write_tree(
        workspace_root, {".prayu/instructions.ignore": "".join(f"p{i}\n" for i in range(128))}
    )
    run(workspace_root, "x.go")
    write_tree(
        workspace_root, {".prayu/instructions.ignore": "".join(f"p{i}\n" for i in range(129))}
    )
    fails(workspace_root, "invalid_ignore", "x.go")
    write_tree(workspace_root, {".prayu/instructions.ignore": "#" * 16384})
    run(workspace_root, "x.go")
    write_tree(workspace_root, {".prayu/instructions.ignore": "#" * 16385})
    fails(workspace_root, "invalid_ignore", "x.go")


# -- conflicts and explanations ---------------------------------------------------------------


def test_conflicts_one_per_adjacent_pair(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "root\n",
            "internal/AGENTS.override.md": "override\n",
            "internal/parser/AGENTS.md": "parser\n",
            ".prayu/rules/go/style.md": "root style\n",
            "internal/.prayu/rules/go/style.md": "internal style\n",
            "internal/.prayu/rules/other.md": "only here\n",
            "CLAUDE.md": "c\n",
        },
    )
    snapshot = run(workspace_root)
    assert [conflict.model_dump() for conflict in snapshot.conflicts] == [
        {
            "role": "agents",
            "lower_precedence_path": "AGENTS.md",
            "higher_precedence_path": "internal/AGENTS.override.md",
            "resolution": "both apply; internal/AGENTS.override.md is nearer to the target and "
            "wins where they conflict",
        },
        {
            "role": "prayu_rule:go/style.md",
            "lower_precedence_path": ".prayu/rules/go/style.md",
            "higher_precedence_path": "internal/.prayu/rules/go/style.md",
            "resolution": "both apply; internal/.prayu/rules/go/style.md is nearer to the target "
            "and wins where they conflict",
        },
        {
            "role": "agents",
            "lower_precedence_path": "internal/AGENTS.override.md",
            "higher_precedence_path": "internal/parser/AGENTS.md",
            "resolution": "both apply; internal/parser/AGENTS.md is nearer to the target and "
            "wins where they conflict",
        },
    ]
    why = {source.path: source.why_effective for source in snapshot.sources}
    assert why["AGENTS.md"] == (
        "workspace-root AGENTS.md; inherited by internal/parser/input.go (depth 0); "
        "internal/AGENTS.override.md is nearer to the target and wins where they conflict"
    )
    assert why["internal/AGENTS.override.md"] == (
        "internal/AGENTS.override.md; inherited by internal/parser/input.go (depth 1); "
        "overrides AGENTS.md where they conflict; internal/parser/AGENTS.md is nearer to the "
        "target and wins where they conflict"
    )
    assert why["internal/parser/AGENTS.md"] == (
        "internal/parser/AGENTS.md; applies to internal/parser/input.go in its own directory "
        "(depth 2); overrides internal/AGENTS.override.md where they conflict"
    )
    assert why["internal/.prayu/rules/go/style.md"] == (
        "rule go/style.md of internal; inherited by internal/parser/input.go (depth 1); "
        "overrides .prayu/rules/go/style.md where they conflict"
    )
    assert why[".prayu/rules/go/style.md"].startswith("workspace-root rule go/style.md; ")


# -- content ----------------------------------------------------------------------------------


def test_bom_and_newlines_normalized(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": b"\xef\xbb\xbfone\r\ntwo\rthree\n"})
    [source] = run(workspace_root, "x.go").sources
    assert source.content == "one\ntwo\nthree\n"
    assert source.bytes == 18


def test_secrets_are_redacted_and_counted(workspace_root: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write_tree(workspace_root, {"AGENTS.md": f"use {token} for the bot\n"})
    [source] = run(workspace_root, "x.go").sources
    assert token not in source.content
    assert "[REDACTED:github_token]" in source.content
    assert source.redacted is True
    assert [item.model_dump() for item in source.redactions] == [
        {"kind": "github_token", "count": 1}
    ]


def test_redaction_that_outgrows_the_bound_fails(workspace_root: Path) -> None:
    limits = Limits(max_file_bytes=60)
    body = "password=hunter2hunter2\n" * 2
    write_tree(workspace_root, {"AGENTS.md": body})
    assert len(body.encode()) <= 60
    fails(workspace_root, "too_large", "x.go", limits=limits)


# -- fail closed ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["/etc/passwd", "../outside.go", "a/../../b", "a/\x00b", "a\\b.go", "C:/x.go", "a/\udcffb"],
)
def test_invalid_targets(workspace_root: Path, target: str) -> None:
    error = fails(workspace_root, "invalid_target", target)
    assert isinstance(error, DiscoveryError)


def test_target_normalization() -> None:
    assert normalize_target("./a//b/./c.go") == "a/b/c.go"
    assert normalize_target("a/b/") == "a/b"
    assert normalize_target("./") == "."


def test_missing_directory_is_not_found(workspace_root: Path) -> None:
    error = fails(workspace_root, "not_found", "nope/deeper/x.go")
    assert isinstance(error, DiscoveryNotFoundError)
    assert error.path == "nope"
    write_tree(workspace_root, {"file.txt": "x"})
    assert fails(workspace_root, "not_found", "file.txt/x.go").path == "file.txt"


def test_missing_workspace_root(tmp_path: Path) -> None:
    fails(tmp_path / "gone", "not_found", "x.go")


def test_symlinked_root_is_refused(tmp_path: Path, workspace_root: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(workspace_root)
    fails(link, "symlink", "x.go")


@pytest.mark.parametrize(
    ("link_at", "target"),
    [
        ("internal", TARGET),  # directory on the chain
        ("internal/parser/input.go", TARGET),  # the target itself
        ("AGENTS.md", TARGET),  # a candidate source
        ("AGENTS.override.md", TARGET),
        ("internal/CLAUDE.md", TARGET),
        (".claude", TARGET),
        (".prayu", TARGET),
        (".prayu/rules", TARGET),
        (".prayu/rules/sub/x.md", TARGET),
        (".prayu/rules/sub/dir", TARGET),
        (".prayu/rules/notes.txt", TARGET),  # anything under rules
        (".prayu/instructions.ignore", TARGET),
        (".prayu/instructions.md", TARGET),
        (".claude/CLAUDE.md", TARGET),
    ],
)
def test_symlinks_fail_closed(
    tmp_path: Path, workspace_root: Path, link_at: str, target: str
) -> None:
    outside = tmp_path / "outside"
    (outside / "parser").mkdir(parents=True)
    (outside / "file.md").write_text("outside\n")
    write_tree(workspace_root, {"internal/parser/input.go": "x", ".prayu/rules/sub/ok.md": "ok\n"})
    link = workspace_root / link_at
    if link.is_dir() and not link.is_symlink():
        link.rename(tmp_path / "moved")
    elif link.exists():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(
        outside
        if link_at in ("internal", ".claude", ".prayu", ".prayu/rules")
        else outside / "file.md"
    )
    error = fails(workspace_root, "symlink", target)
    assert error.path == link_at


def test_superseded_agents_symlink_is_still_refused(tmp_path: Path, workspace_root: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("x\n")
    write_tree(workspace_root, {"AGENTS.override.md": "override\n"})
    (workspace_root / "AGENTS.md").symlink_to(tmp_path / "elsewhere.md")
    assert fails(workspace_root, "symlink", "x.go").path == "AGENTS.md"


def test_dangling_symlink_source_is_refused(workspace_root: Path) -> None:
    (workspace_root / "CLAUDE.md").symlink_to(workspace_root / "missing.md")
    fails(workspace_root, "symlink", "x.go")


def test_directory_named_like_a_source(workspace_root: Path) -> None:
    (workspace_root / "AGENTS.md").mkdir()
    assert fails(workspace_root, "not_regular_file", "x.go").path == "AGENTS.md"


def test_fifo_source_fails_without_blocking(workspace_root: Path) -> None:
    os.mkfifo(workspace_root / "CLAUDE.md")
    assert fails(workspace_root, "not_regular_file", "x.go").path == "CLAUDE.md"


def test_fifo_under_rules(workspace_root: Path) -> None:
    write_tree(workspace_root, {".prayu/rules/a.md": "a\n"})
    os.mkfifo(workspace_root / ".prayu/rules/pipe")
    assert fails(workspace_root, "not_regular_file", "x.go").path == ".prayu/rules/pipe"


def test_socket_source(tmp_path: Path) -> None:
    # AF_UNIX paths are short: use a short root.
    root = Path(os.path.realpath(tmp_path))
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "CLAUDE.md"))
        fails(root, "not_regular_file", "x.go")
    finally:
        sock.close()


def test_fifo_ignore_file(workspace_root: Path) -> None:
    (workspace_root / ".prayu").mkdir()
    os.mkfifo(workspace_root / ".prayu/instructions.ignore")
    fails(workspace_root, "not_regular_file", "x.go")


def test_plain_files_named_like_control_dirs_are_harmless(workspace_root: Path) -> None:
    write_tree(
        workspace_root, {".claude": "not a dir\n", ".prayu": "nor this\n", "AGENTS.md": "a\n"}
    )
    assert paths(run(workspace_root, "x.go")) == ["AGENTS.md"]


def test_rules_that_is_a_file_fails(workspace_root: Path) -> None:
    write_tree(workspace_root, {".prayu/rules": "oops\n"})
    fails(workspace_root, "not_regular_file", "x.go")


@pytest.mark.parametrize(
    ("body", "code", "offset"),
    [
        (b"ok\x00no\n", "nul_byte", 2),
        (b"caf\xc3 bad\n", "invalid_utf8", 3),
        (b"\xef\xbb\xbfab\xff\n", "invalid_utf8", 5),
        (b"\xed\xa0\x80\n", "invalid_utf8", 0),  # an encoded surrogate is not UTF-8
    ],
)
def test_content_fail_closed(workspace_root: Path, body: bytes, code: str, offset: int) -> None:
    write_tree(workspace_root, {"internal/AGENTS.md": body, "internal/parser/input.go": "x"})
    error = fails(workspace_root, code)
    assert error.path == "internal/AGENTS.md"
    assert error.details["offset"] == offset


@pytest.mark.parametrize(
    "name", ["AGENTS.md", "CLAUDE.md", ".prayu/rules/r.md", ".claude/CLAUDE.md"]
)
def test_empty_sources_fail(workspace_root: Path, name: str) -> None:
    write_tree(workspace_root, {name: " \n\n"})
    assert fails(workspace_root, "empty_source", "x.go").path == name


def test_blank_override_must_still_be_utf8(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.override.md": b"\xff", "AGENTS.md": "a\n"})
    fails(workspace_root, "invalid_utf8", "x.go")


def test_per_file_bound(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 65536})
    run(workspace_root, "x.go")
    write_tree(workspace_root, {"AGENTS.md": "a" * 65537})
    error = fails(workspace_root, "too_large", "x.go")
    assert error.details == {"bytes": 65537, "limit": 65536}


def test_total_bound(workspace_root: Path) -> None:
    files: dict[str, str | bytes] = {f".prayu/rules/r{i}.md": "a" * 65536 for i in range(4)}
    write_tree(workspace_root, files)
    run(workspace_root, "x.go")
    write_tree(workspace_root, {"AGENTS.md": "one more\n"})
    error = fails(workspace_root, "total_too_large", "x.go")
    assert error.path == ".prayu/rules/r3.md"


def test_file_count_bound(workspace_root: Path) -> None:
    write_tree(workspace_root, {f".prayu/rules/r{i:02}.md": "r\n" for i in range(64)})
    assert len(run(workspace_root, "x.go").sources) == 64
    write_tree(workspace_root, {"AGENTS.md": "one more\n"})
    # AGENTS.md comes first in the level, so the last rule is the 65th.
    assert fails(workspace_root, "too_many_files", "x.go").path == ".prayu/rules/r63.md"


def test_ignored_sources_do_not_count_against_bounds(workspace_root: Path) -> None:
    write_tree(workspace_root, {f".prayu/rules/r{i:02}.md": "r\n" for i in range(70)})
    write_tree(workspace_root, {".prayu/instructions.ignore": ".prayu/rules/r6*.md\n"})
    assert len(run(workspace_root, "x.go").sources) == 60


def test_target_depth_bound(workspace_root: Path) -> None:
    deep32 = "/".join(["d"] * 31) + "/f.go"
    (workspace_root / deep32).parent.mkdir(parents=True)
    run(workspace_root, deep32)
    fails(workspace_root, "too_deep", "d/" + deep32)


def test_rules_nesting_bound(workspace_root: Path) -> None:
    # 32 directories below `.prayu/rules/` nest within the bound; a 33rd does not.
    nested = ".prayu/rules/" + "/".join(["n"] * 32) + "/r.md"
    write_tree(workspace_root, {nested: "deep rule\n"})
    assert paths(run(workspace_root, "x.go")) == [nested]
    write_tree(workspace_root, {".prayu/rules/" + "/".join(["n"] * 33) + "/r.md": "deeper\n"})
    error = fails(workspace_root, "too_deep", "x.go")
    assert error.details == {"limit": 32}


@pytest.mark.parametrize("name", ["a\nb.md", "tab\there.md", "bidi\u202e.md", "esc\x1b.md"])
def test_a_rules_entry_named_with_a_control_character_fails_closed(
    workspace_root: Path, name: str
) -> None:
    write_tree(workspace_root, {".prayu/rules/ok.md": "ok\n", f".prayu/rules/{name}": "x\n"})
    error = fails(workspace_root, "invalid_name", "x.go")
    assert name not in error.message


def test_a_name_over_the_file_system_limit_is_not_found(workspace_root: Path) -> None:
    fails(workspace_root, "not_found", "a" * 300 + "/x.go")
    assert run(workspace_root, "b" * 300 + ".go").sources == []


def test_error_carries_typed_json(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": ""})
    error = fails(workspace_root, "empty_source", "x.go")
    body = error.to_json()
    assert body["code"] == "empty_source"
    assert body["path"] == "AGENTS.md"
    assert "AGENTS.md" in body["message"]


# -- fingerprint ------------------------------------------------------------------------------


def test_fingerprint_excludes_time_workspace_and_prose(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "root\n"})
    first = run(workspace_root, "x.go")
    other = discover("another-id", str(workspace_root), "x.go", reader=FileReader())
    assert first.fingerprint == other.fingerprint
    data = first.to_json()
    data["loaded_at"] = "1999-01-01T00:00:00Z"
    data["sources"][0]["why_effective"] = "changed prose"
    data["sources"][0]["loaded_at"] = "1999-01-01T00:00:00Z"
    assert snapshot_fingerprint(data) == first.fingerprint


@pytest.mark.parametrize(
    "change",
    ["content", "order", "ignore", "redaction", "target", "new_source", "kind"],
)
def test_fingerprint_moves_on_every_change(workspace_root: Path, change: str) -> None:
    base: dict[str, str | bytes] = {
        "AGENTS.md": "root\n",
        ".prayu/rules/a.md": "a\n",
        ".prayu/rules/b.md": "b\n",
        "internal/x.go": "x",
    }
    write_tree(workspace_root, base)
    before = run(workspace_root, "internal/x.go").fingerprint
    target = "internal/x.go"
    if change == "content":
        write_tree(workspace_root, {"AGENTS.md": "root changed\n"})
    elif change == "order":
        (workspace_root / ".prayu/rules/a.md").rename(workspace_root / ".prayu/rules/c.md")
    elif change == "ignore":
        write_tree(workspace_root, {".prayu/instructions.ignore": "nothing-matches\n"})
        write_tree(
            workspace_root, {"CLAUDE.md": "c\n", ".prayu/instructions.ignore": "CLAUDE.md\n"}
        )
    elif change == "redaction":
        write_tree(workspace_root, {"AGENTS.md": "password=swordfish123\n"})
    elif change == "target":
        target = "internal/y.go"
    elif change == "new_source":
        write_tree(workspace_root, {"internal/AGENTS.md": "i\n"})
    elif change == "kind":
        (workspace_root / "AGENTS.md").rename(workspace_root / "AGENTS.override.md")
    assert run(workspace_root, target).fingerprint != before
