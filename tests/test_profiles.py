"""Agent profiles (issue 20, docs/reference/profiles.md): for each agent, trees built for each rule
of its profile (walk and stop markers, glob front matter, imports with cycles, hop limits and code
spans, fallbacks, truncation at exact bytes), the fail-closed cases, and the promise that
profiles are views: discovery's fingerprint and runs are the same with or without them."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from rutter_core.app.facade import Rutter
from rutter_core.app.instructions import EffectiveInstructionsParams
from rutter_core.app.profiles import ProfileParams, ProfileView, ProfileViews
from rutter_core.app.runs import CreateRunParams
from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.engine import Evaluation, evaluate
from rutter_core.profiles.frontmatter import parse_front_matter
from rutter_core.profiles.globs import compile_glob, split_globs
from rutter_core.profiles.imports import find_imports
from rutter_core.profiles.model import AGENTS, AgentName, all_profiles, load_profile
from rutter_core.store import Store, open_store
from rutter_core.workspaces.service import register_workspace
from tests.conftest import write_tree
from tests.testing import THIS_MACHINE


@pytest.fixture(autouse=True)
def agent_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty home: the agents' user settings of whoever runs the tests never count."""
    home = tmp_path / "empty-user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)


BUDGET = 32 * 1024
INSTR = ".github/instructions"
EVERY = 'applyTo: "**"'
NOT_REVIEW = 'excludeAgent: "code-review"'
NOT_AGENT = 'excludeAgent: "coding-agent"'


def run(root: Path, agent: AgentName, target: str) -> Evaluation:
    return evaluate(load_profile(agent), str(root), target, FileReader())


def paths(root: Path, agent: AgentName, target: str) -> list[str]:
    return [item.file.rel for item in run(root, agent, target).loaded]


def notes(evaluation: Evaluation) -> list[tuple[str, str, int | None]]:
    return [(note.rel, note.code, note.line) for note in evaluation.notes]


# -- the profiles as data -------------------------------------------------------------------


def test_every_profile_loads_and_names_the_source_of_each_rule() -> None:
    profiles = all_profiles()
    assert [p.agent for p in profiles] == list(AGENTS)
    for profile in profiles:
        assert profile.read_on == "2026-12-03"
        assert profile.profile_version >= 1
        assert profile.stop_source
        assert profile.sources
        assert all(spec.source for spec in profile.sources)
        if profile.imports is not None:
            assert profile.imports.source
    assert load_profile("codex").limits.budget_bytes == BUDGET
    claude, gemini = load_profile("claude").imports, load_profile("gemini").imports
    assert claude is not None
    assert claude.max_hops == 4
    assert gemini is not None
    assert gemini.max_hops == 5


# -- globs, front matter, imports -----------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.ts", "a.ts", True),
        ("**/*.ts", "src/deep/a.ts", True),
        ("*.ts", "a.ts", True),
        ("*.ts", "src/a.ts", False),
        ("src/**/*.ts", "src/a.ts", True),
        ("src/**/*.ts", "src/x/y/a.ts", True),
        ("src/**/*.ts", "lib/a.ts", False),
        ("src/{api,web}/*.py", "src/web/a.py", True),
        ("src/{api,web}/*.py", "src/cli/a.py", False),
        ("docs/[ab].md", "docs/b.md", True),
        ("docs/[!ab].md", "docs/b.md", False),
        ("./src/?.go", "src/a.go", True),
        ("src/", "src/a/b.go", True),
        ("src/{api", "src/{api", False),  # unbalanced: matches nothing
    ],
)
def test_globs_match_as_agents_document_them(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern).matches(path) is matches


def test_copilot_star_alone_matches_every_file_and_lists_split_on_commas() -> None:
    assert compile_glob("*", star_matches_all=True).matches("src/deep/a.py")
    assert not compile_glob("*").matches("src/deep/a.py")
    assert split_globs("src/**/*.ts, *.md,{a,b}/*.go") == ("src/**/*.ts", "*.md", "{a,b}/*.go")
    assert split_globs(["'a/*.py'", '"b/**"']) == ("a/*.py", "b/**")


def test_front_matter_reads_what_agents_write() -> None:
    cursor = parse_front_matter(
        "---\ndescription: x\nglobs: src/**/*.ts, *.md\nalwaysApply: true\n---\nbody\n"
    )
    assert cursor.present
    assert cursor.flag("alwaysApply")
    assert split_globs(cursor.get("globs")) == ("src/**/*.ts", "*.md")
    claude = parse_front_matter('---\npaths:\n  - "src/**/*.ts"\n  - lib/*.ts\n---\n')
    assert claude.get("paths") == ["src/**/*.ts", "lib/*.ts"]
    assert claude.lines["paths"] == 1
    assert not parse_front_matter("---\nno end\n").present
    assert not parse_front_matter("# title\n---\n").present


def test_imports_skip_code_spans_fences_and_addresses() -> None:
    text = (
        "See @docs/a.md and `@docs/span.md`, mail me at me@example.com.\n"
        "```\n@docs/fenced.md\n```\n"
        "~~~~\n@docs/tilde.md\n~~~~\n"
        "@docs/b.md\n"
        "``code `@inner.md` still code`` then @docs/c.md.\n"
    )
    found = [(ref.path, ref.line) for ref in find_imports(text)]
    assert found == [("docs/a.md", 0), ("docs/b.md", 7), ("docs/c.md", 8)]
    unskipped = [ref.path for ref in find_imports(text, skip_code=False)]
    assert "docs/fenced.md" in unskipped


# -- Codex ----------------------------------------------------------------------------------


def test_codex_spends_one_budget_root_first_and_cuts_inside_a_multibyte_character(
    workspace_root: Path,
) -> None:
    root_doc = "r" * 29_999 + "\n"  # 30,000 bytes: 2,768 bytes of the budget remain
    lines = "line\n" * 300  # 1,500 bytes: the cut falls on line 302, inside the é
    sub_doc = lines + "x" * 1_267 + "é" + "\nlost\n"
    write_tree(
        workspace_root,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "AGENTS.md": root_doc,
            "svc/AGENTS.md": sub_doc,
            "svc/api/AGENTS.md": "never read\n",
            "svc/api/h.go": "package api\n",
        },
    )
    evaluation = run(workspace_root, "codex", "svc/api/h.go")
    assert [item.file.rel for item in evaluation.loaded] == ["AGENTS.md", "svc/AGENTS.md"]
    first, cut = evaluation.loaded
    assert first.truncation is None
    assert cut.truncation is not None
    assert cut.truncation.byte == BUDGET - 30_000 == 2_768
    cut_at = sub_doc.encode("utf-8")[:2_768]
    assert cut_at.endswith(b"\xc3")  # the first byte of é is kept, the second is lost
    assert cut.truncation.line == 301
    assert cut.truncation.lost_bytes == len(sub_doc.encode("utf-8")) - 2_768
    assert "not loaded: svc/api/AGENTS.md" in cut.why
    assert ("svc/AGENTS.md", "budget_cut", 300) in notes(evaluation)
    assert ("svc/api/AGENTS.md", "budget_dropped", None) in notes(evaluation)
    [message] = [n.message for n in evaluation.notes if n.code == "budget_cut"]
    assert message.startswith("Codex will cut this file at line 301 (byte 2768)")
    assert "after AGENTS.md 29.3 KiB" in message


def test_codex_reads_one_file_per_directory_override_first_and_skips_empty_ones(
    workspace_root: Path,
) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.override.md": "override\n",
            "AGENTS.md": "shadowed\n",
            "a/AGENTS.md": "  \n\n",
            "b/AGENTS.override.md": "",
            "b/AGENTS.md": "hidden by the empty override\n",
        },
    )
    assert paths(workspace_root, "codex", "a/x.go") == ["AGENTS.override.md"]
    # codex-rs takes the first name that exists in a directory, then skips it when empty.
    assert paths(workspace_root, "codex", "b/x.go") == ["AGENTS.override.md"]


def test_the_project_root_is_the_nearest_git_root_else_the_workspace_root(
    workspace_root: Path,
) -> None:
    write_tree(
        workspace_root,
        {"AGENTS.md": "outer\n", "pkg/.git": "gitdir: ../.git/modules/pkg\n",
         "pkg/AGENTS.md": "inner\n", "other/AGENTS.md": "other\n"},
    )  # fmt: skip
    inner = run(workspace_root, "codex", "pkg/main.go")
    assert inner.project_root == "pkg"
    assert [item.file.rel for item in inner.loaded] == ["pkg/AGENTS.md"]
    outer = run(workspace_root, "codex", "other/main.go")
    assert outer.project_root == "."
    assert [item.file.rel for item in outer.loaded] == ["AGENTS.md", "other/AGENTS.md"]


# -- Claude Code ----------------------------------------------------------------------------


def test_claude_reads_its_files_and_rules_and_never_agents_md(workspace_root: Path) -> None:
    write_tree(
        workspace_root,
        {
            "AGENTS.md": "agents\n",
            "CLAUDE.md": "root\n",
            ".claude/CLAUDE.md": "dot claude\n",
            "CLAUDE.local.md": "local\n",
            ".claude/rules/always.md": "always\n",
            ".claude/rules/ts/api.md": '---\npaths:\n  - "src/**/*.ts"\n---\nts\n',
            ".claude/rules/py.md": "---\npaths: lib/**/*.py\n---\npy\n",
            "src/AGENTS.md": "src agents\n",
            "src/CLAUDE.md": "@AGENTS.md\n",
        },
    )
    evaluation = run(workspace_root, "claude", "src/app.ts")
    assert [item.file.rel for item in evaluation.loaded] == [
        "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md",
        ".claude/rules/always.md", ".claude/rules/ts/api.md",
        "src/AGENTS.md", "src/CLAUDE.md",
    ]  # fmt: skip
    # The root AGENTS.md is reported; src/AGENTS.md is imported, so it is read.
    assert [(rel, code) for rel, code, _ in notes(evaluation)] == [("AGENTS.md", "not_read")]
    assert "src/app.ts matches its `paths:` globs" in evaluation.loaded[4].why


def test_a_claude_md_linked_to_agents_md_reads_it(workspace_root: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "shared\n"})
    (workspace_root / "CLAUDE.md").symlink_to("AGENTS.md")
    evaluation = run(workspace_root, "claude", "x.go")
    assert [item.file.rel for item in evaluation.loaded] == ["CLAUDE.md"]
    assert notes(evaluation) == []


def test_claude_follows_imports_four_hops_once_each_and_reports_the_rest(
    workspace_root: Path,
) -> None:
    chain = {f"docs/{n}.md": f"hop {n} @{n + 1}.md\n" for n in range(1, 6)}
    write_tree(
        workspace_root,
        {
            "CLAUDE.md": "# root\nSee @docs/1.md and `@docs/code.md`.\n\n```\n@docs/fence.md\n```\n"
            "Also @../outside.md, @~/.claude/mine.md and @docs/missing.md.\n@docs/loop.md\n",
            **chain,
            "docs/6.md": "too deep\n",
            "docs/code.md": "code\n",
            "docs/fence.md": "fence\n",
            "docs/loop.md": "back to @../CLAUDE.md\n",
        },
    )
    evaluation = run(workspace_root, "claude", "x.go")
    loaded = [(item.file.rel, item.hop) for item in evaluation.loaded]
    # Imported files come before the file importing them, deepest first.
    assert loaded == [
        ("docs/4.md", 4), ("docs/3.md", 3), ("docs/2.md", 2), ("docs/1.md", 1),
        ("docs/loop.md", 1), ("CLAUDE.md", 0),
    ]  # fmt: skip
    assert sorted(notes(evaluation)) == [
        ("CLAUDE.md", "import_outside", 6),
        ("CLAUDE.md", "import_outside", 6),
        ("docs/4.md", "import_too_deep", 0),
    ]


def test_claude_skips_a_file_over_four_mib(workspace_root: Path) -> None:
    write_tree(
        workspace_root, {"CLAUDE.md": "root\n", "big/CLAUDE.md": "x" * (4 * 1024 * 1024 + 1)}
    )
    evaluation = run(workspace_root, "claude", "big/a.go")
    assert [item.file.rel for item in evaluation.loaded] == ["CLAUDE.md"]
    assert notes(evaluation) == [("big/CLAUDE.md", "too_large_skipped", None)]


# -- Gemini CLI -----------------------------------------------------------------------------


def test_gemini_reads_gemini_md_root_first_with_five_hops_of_imports_after(
    workspace_root: Path,
) -> None:
    chain = {f"g/{n}.md": f"@{n + 1}.md\n" for n in range(1, 7)}
    write_tree(
        workspace_root,
        {"GEMINI.md": "@g/1.md\n", "a/GEMINI.md": "a\n", "a/b/GEMINI.md": "b\n", **chain,
         "g/7.md": "end\n", "CLAUDE.md": "not gemini's\n"},
    )  # fmt: skip
    evaluation = run(workspace_root, "gemini", "a/b/c.py")
    assert [item.file.rel for item in evaluation.loaded] == [
        "GEMINI.md", "g/1.md", "g/2.md", "g/3.md", "g/4.md", "g/5.md",
        "a/GEMINI.md", "a/b/GEMINI.md",
    ]  # fmt: skip
    assert notes(evaluation) == [("g/5.md", "import_too_deep", 0)]


# -- Copilot --------------------------------------------------------------------------------


def test_copilot_applies_apply_to_globs_exclude_agent_and_the_nearest_agents_md(
    workspace_root: Path,
) -> None:
    write_tree(
        workspace_root,
        {
            ".github/copilot-instructions.md": "repo\n",
            f"{INSTR}/ts.instructions.md": '---\napplyTo: "**/*.ts,**/*.tsx"\n---\nts\n',
            f"{INSTR}/all.instructions.md": '---\napplyTo: "*"\n---\nall\n',
            f"{INSTR}/review.instructions.md": f"---\n{EVERY}\n{NOT_REVIEW}\n---\nr\n",
            f"{INSTR}/deep/agent.instructions.md": f"---\n{EVERY}\n{NOT_AGENT}\n---\nno\n",
            ".github/instructions/py.instructions.md": '---\napplyTo: "**/*.py"\n---\npy\n',
            ".github/instructions/none.instructions.md": "no applyTo: never applied\n",
            "AGENTS.md": "root\n",
            "web/AGENTS.md": "web\n",
            "web/ui/app.tsx": "",
            "CLAUDE.md": "not read: an AGENTS.md applies\n",
        },
    )
    evaluation = run(workspace_root, "copilot", "web/ui/app.tsx")
    assert [item.file.rel for item in evaluation.loaded] == [
        ".github/copilot-instructions.md",
        ".github/instructions/all.instructions.md",
        ".github/instructions/review.instructions.md",
        ".github/instructions/ts.instructions.md",
        "web/AGENTS.md",
    ]
    assert notes(evaluation) == [
        (".github/instructions/deep/agent.instructions.md", "excluded_agent", 2)
    ]


def test_copilot_falls_back_to_the_root_claude_md_without_an_agents_md(
    workspace_root: Path,
) -> None:
    write_tree(workspace_root, {"CLAUDE.md": "claude\n", "GEMINI.md": "gemini\n"})
    assert paths(workspace_root, "copilot", "a.py") == ["CLAUDE.md"]


# -- Cursor ---------------------------------------------------------------------------------


def test_cursor_attaches_always_and_glob_rules_and_reads_agents_md_on_the_way(
    workspace_root: Path,
) -> None:
    write_tree(
        workspace_root,
        {
            ".cursor/rules/always.mdc": "---\ndescription: core\nalwaysApply: true\n---\nc\n",
            ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts, *.md\nalwaysApply: false\n---\nts\n",
            ".cursor/rules/requested.mdc": "---\ndescription: only when asked\n---\nr\n",
            ".cursor/rules/manual.mdc": "manual\n",
            ".cursor/rules/py.mdc": "---\nglobs: ['**/*.py']\n---\npy\n",
            "src/.cursor/rules/nested.mdc": "---\nalwaysApply: true\n---\nnested\n",
            "AGENTS.md": "root\n",
            "src/AGENTS.md": "src\n",
        },
    )
    assert paths(workspace_root, "cursor", "src/a.ts") == [
        ".cursor/rules/always.mdc", ".cursor/rules/ts.mdc", "AGENTS.md",
        "src/.cursor/rules/nested.mdc", "src/AGENTS.md",
    ]  # fmt: skip
    assert paths(workspace_root, "cursor", "tool.py") == [
        ".cursor/rules/always.mdc", ".cursor/rules/py.mdc", "AGENTS.md",
    ]  # fmt: skip


# -- fail closed ----------------------------------------------------------------------------


def test_files_an_agent_reads_fail_closed_with_discovery_s_typed_errors(
    workspace_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret plans\n")
    write_tree(workspace_root, {"a/x.go": "", "b/x.go": "", "c/x.go": "", "d/x.go": ""})
    (workspace_root / "a" / "CLAUDE.md").symlink_to(outside)
    os.mkfifo(workspace_root / "b" / "GEMINI.md")
    (workspace_root / "c" / "AGENTS.md").write_bytes(b"bad \xff byte\n")
    (workspace_root / "d" / "AGENTS.md").write_bytes(b"nul \x00 byte\n")
    cases = [("a", "claude", "symlink"), ("b", "gemini", "not_regular_file"),
             ("c", "codex", "invalid_utf8"), ("d", "cursor", "nul_byte")]  # fmt: skip
    for directory, agent, code in cases:
        with pytest.raises(RutterError) as failed:
            run(workspace_root, agent, f"{directory}/x.go")  # type: ignore[arg-type]
        assert failed.value.code == code, (agent, failed.value.code)
        assert "secret plans" not in failed.value.message


def test_an_import_that_cannot_be_read_is_a_reported_skip(
    workspace_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    write_tree(workspace_root, {"CLAUDE.md": "intro\n@docs/link.md\n@docs/fifo.md\n"})
    (workspace_root / "docs").mkdir()
    (workspace_root / "docs" / "link.md").symlink_to(outside)
    os.mkfifo(workspace_root / "docs" / "fifo.md")
    evaluation = run(workspace_root, "claude", "x.go")
    assert [item.file.rel for item in evaluation.loaded] == ["CLAUDE.md"]
    assert notes(evaluation) == [
        ("CLAUDE.md", "import_unreadable", 1),
        ("CLAUDE.md", "import_unreadable", 2),
    ]


# -- views only -----------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'rutter.db'}") as opened:
        yield opened


def _counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def test_profiles_never_change_discovery_s_fingerprint_or_a_run(
    store: Store, workspace_root: Path, tmp_path: Path
) -> None:
    write_tree(
        workspace_root,
        {"AGENTS.md": "a" * 40_000 + "\n", "CLAUDE.md": "@AGENTS.md\n", "GEMINI.md": "g\n",
         ".cursor/rules/r.mdc": "---\nalwaysApply: true\n---\nr\n", "src/main.go": ""},
    )  # fmt: skip
    register_workspace(store, "demo", workspace_root, cwd=workspace_root, machine=THIS_MACHINE)
    rutter = Rutter(store)
    created = rutter.runs.create(
        CreateRunParams(goal="g", workspace_id="demo", target="src/main.go"), actor="cli"
    )
    before = rutter.instructions.effective(
        EffectiveInstructionsParams(target="src/main.go", workspace_id="demo")
    )
    rows = _counts(tmp_path / "rutter.db")
    views = rutter.profiles.view(
        ProfileParams(target="src/main.go", workspace_id="demo", agent="all")
    )
    assert isinstance(views, ProfileViews)
    assert [view.agent for view in views.profiles] == list(AGENTS)
    codex = views.profiles[0]
    assert isinstance(codex, ProfileView)
    assert codex.sources[0].truncation is not None
    after = rutter.instructions.effective(
        EffectiveInstructionsParams(target="src/main.go", workspace_id="demo")
    )
    assert after.fingerprint == before.fingerprint == created.fingerprint
    assert _counts(tmp_path / "rutter.db") == rows  # nothing written
    # And a fresh reader (no cache shared with the profiles) agrees.
    fresh = Rutter(store, FileReader()).instructions.effective(
        EffectiveInstructionsParams(target="src/main.go", workspace_id="demo")
    )
    assert fresh.fingerprint == before.fingerprint


# -- the editor's notes ---------------------------------------------------------------------


def test_a_glob_matching_no_file_is_reported_from_a_cached_listing(workspace_root: Path) -> None:
    from rutter_core.profiles.diagnose import is_agent_file, notes_for_file
    from rutter_core.profiles.listing import TTL_SECONDS, ProjectFiles

    rule = ".github/instructions/rust.instructions.md"
    write_tree(workspace_root, {rule: '---\napplyTo: "**/*.rs"\n---\nrust\n', "a.go": ""})
    now = [0.0]
    files = ProjectFiles(clock=lambda: now[0])
    reader = FileReader()

    def found() -> list[tuple[str, str, int | None]]:
        notes = notes_for_file(str(workspace_root), rule, ("copilot",), reader, files)
        return [(agent, note.code, note.line) for agent, note in notes]

    assert found() == [("copilot", "glob_matches_nothing", 1)]
    write_tree(workspace_root, {"src/lib.rs": ""})
    assert found() == [("copilot", "glob_matches_nothing", 1)]  # the listing is reused...
    now[0] += TTL_SECONDS
    assert found() == []  # ...until it is older than its TTL
    assert is_agent_file(rule)
    assert is_agent_file("pkg/.cursor/rules/go.mdc")
    assert is_agent_file("/abs/path/GEMINI.md")
    assert not is_agent_file("docs/notes.md")


def test_a_listing_that_hits_a_bound_claims_nothing(workspace_root: Path) -> None:
    from rutter_core.profiles import listing

    write_tree(workspace_root, {f"d{n}/f.txt": "" for n in range(3)})
    assert listing.list_files(str(workspace_root)).complete
    deep = workspace_root / "/".join(f"l{n}" for n in range(listing.MAX_DEPTH + 1))
    deep.mkdir(parents=True)
    assert not listing.list_files(str(workspace_root)).complete


def test_a_shared_memo_answers_as_fresh_lookups_do(workspace_root: Path) -> None:
    from rutter_core.profiles.engine import Memo

    write_tree(
        workspace_root,
        {"AGENTS.md": "a" * 20_000 + "\n", "CLAUDE.md": "@docs/x.md\n", "docs/x.md": "x\n",
         "a/AGENTS.md": "b" * 20_000 + "\n", "a/b/AGENTS.md": "c\n", "c/GEMINI.md": "g\n"},
    )  # fmt: skip
    memo, reader = Memo(), FileReader()
    for target in ("a/b/x.go", "a/y.go", "c/z.go", "."):
        for profile in all_profiles():
            shared = evaluate(profile, str(workspace_root), target, reader, memo)
            fresh = evaluate(profile, str(workspace_root), target, FileReader())
            assert [(i.file.rel, i.truncation) for i in shared.loaded] == [
                (i.file.rel, i.truncation) for i in fresh.loaded
            ]
            assert shared.notes == fresh.notes


def test_imports_stop_after_a_bounded_number_of_files(workspace_root: Path) -> None:
    from rutter_core.profiles.engine import MAX_VIEW_FILES

    many = {f"d/{n}.md": f"{n}\n" for n in range(MAX_VIEW_FILES + 5)}
    body = "".join(f"@d/{n}.md\n" for n in range(MAX_VIEW_FILES + 5))
    write_tree(workspace_root, {"CLAUDE.md": body, **many})
    evaluation = run(workspace_root, "claude", "x.go")
    assert len(evaluation.loaded) == MAX_VIEW_FILES
    assert notes(evaluation) == [("CLAUDE.md", "too_many_imports", MAX_VIEW_FILES - 1)]


# -- a file over rutter's read limit that Codex would cut -----------------------------------

MAX_READ = 4 * 1024 * 1024


@pytest.mark.parametrize("size", [MAX_READ, MAX_READ + 1, MAX_READ + 4096])
def test_codex_cuts_a_file_over_the_read_limit_at_its_budget_reading_only_the_budget(
    workspace_root: Path, size: int
) -> None:
    """At 4 MiB the file is read whole; past it only Codex's budget is read (the rest is
    never touched): either way the cut is at the budget, with the rest of the file lost."""
    body = "a" + ("é" * 20_000 + "\n") * (size // 40_001 + 1)  # the cut splits an é
    whole = body.encode()[:size].decode("utf-8", "ignore").encode()
    raw = whole + b"\n" * (size - len(whole))  # valid UTF-8 of exactly `size` bytes
    (workspace_root / "AGENTS.md").write_bytes(raw)
    evaluation = run(workspace_root, "codex", ".")
    [item] = evaluation.loaded
    assert item.file.size == size
    assert len(item.file.raw) == (size if size <= MAX_READ else BUDGET)
    line = raw[:BUDGET].count(b"\n") + 1
    assert item.truncation is not None
    assert (item.truncation.byte, item.truncation.line) == (BUDGET, line)
    assert item.truncation.lost_bytes == size - BUDGET
    assert ("AGENTS.md", "budget_cut", line - 1) in notes(evaluation)


def test_past_the_read_limit_discovery_and_agents_without_a_budget_still_fail_closed(
    store: Store, workspace_root: Path
) -> None:
    big = "x" * (MAX_READ + 1)
    write_tree(workspace_root, {"AGENTS.md": big, "GEMINI.md": "g @big.md\n", "big.md": big})
    register_workspace(store, "demo", workspace_root, cwd=workspace_root, machine=THIS_MACHINE)
    with pytest.raises(RutterError) as caught:
        Rutter(store).instructions.effective(
            EffectiveInstructionsParams(target=".", workspace_id="demo")
        )
    assert caught.value.code == "too_large"
    codex = run(workspace_root, "codex", ".")
    assert codex.loaded[0].truncation is not None
    gemini = run(workspace_root, "gemini", ".")  # no budget: an import past 4 MiB is refused
    assert [item.file.rel for item in gemini.loaded] == ["GEMINI.md"]
    assert [n.code for n in gemini.notes] == ["import_unreadable"]
    (workspace_root / "GEMINI.md").write_text(big)
    with pytest.raises(RutterError) as caught:
        run(workspace_root, "gemini", ".")
    assert caught.value.code == "too_large"
