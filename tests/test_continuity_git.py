"""A workspace's git identity, read without running git: real repositories made by the git CLI.

git itself is the reference on every benign repository (`rev-parse HEAD`, `symbolic-ref HEAD`,
run with hooks and fsmonitor disabled and no user or system config). A hostile repository
proves nothing of it runs (and, afterwards, that git itself would have run it), and broken
ones (garbage, NUL, huge files, FIFOs, link loops) give a reason, never an exception or a hang.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rutter_core.continuity import git as git_module
from rutter_core.continuity.git import (
    CONFIG_MAX_BYTES,
    GitDrift,
    GitIdentity,
    _parse_config,
    _Unavailable,
    git_drift,
    read_git_identity,
)

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed: it is the reference")

# Every process start this test process makes while `_watching` is non-empty is recorded.
_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn")
_process_starts: list[str] = []
_watching: list[bool] = []


def _audit(event: str, _args: tuple[Any, ...]) -> None:
    if _watching and (event in _PROCESS_EVENTS or event.startswith("os.fork")):
        _process_starts.append(event)


sys.addaudithook(_audit)


def read(root: Path, **kwargs: Any) -> GitIdentity:
    """read_git_identity on a daemon thread with a deadline: a hang fails the test (and the
    stuck thread does not keep the test process alive)."""
    done: list[GitIdentity | BaseException] = []

    def run() -> None:
        try:
            done.append(read_git_identity(str(root), **kwargs))
        except BaseException as exc:
            done.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done, "read_git_identity hung"
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


class Git:
    """The git CLI, isolated from any user or system configuration."""

    def __init__(self, base: Path) -> None:
        home = base / "git-home"
        home.mkdir()
        self.templates = base / "git-templates"  # no sample hooks in new repositories
        self.templates.mkdir()
        self.no_hooks = base / "git-no-hooks"
        self.no_hooks.mkdir()
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "LC_ALL": "C",
        }

    def raw(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert GIT is not None
        done = subprocess.run(
            [GIT, *args], cwd=cwd, env=self.env, capture_output=True, text=True, check=False
        )
        if check:
            assert done.returncode == 0, done.stderr
        return done

    def __call__(self, *args: str, cwd: Path, check: bool = True) -> str:
        """git with hooks and fsmonitor disabled (how the tests build and ask benign repos)."""
        safe = ("-c", f"core.hooksPath={self.no_hooks}", "-c", "core.fsmonitor=false")
        return self.raw(*safe, *args, cwd=cwd, check=check).stdout.strip()

    def init(self, path: Path, *extra: str) -> Path:
        self("init", "-q", "-b", "main", f"--template={self.templates}", *extra, str(path),
             cwd=path.parent)  # fmt: skip
        return path

    def commit(self, repo: Path, message: str = "c") -> str:
        (repo / "file.txt").write_text(message, encoding="utf-8")
        self("add", "file.txt", cwd=repo)
        self("commit", "-q", "-m", message, cwd=repo)
        return self("rev-parse", "HEAD", cwd=repo)

    def says(self, root: Path) -> GitIdentity:
        """What git reports for `root`, in our terms (the reference)."""
        inside = self("rev-parse", "--is-inside-work-tree", cwd=root, check=False)
        if inside != "true":
            return GitIdentity(branch=None, head=None, reason="not_a_git_work_tree")
        symbolic = self("symbolic-ref", "-q", "HEAD", cwd=root, check=False)
        # Only refs/heads/ is a branch (our decision; `--short` would also shorten others).
        branch = (
            symbolic.removeprefix("refs/heads/") if symbolic.startswith("refs/heads/") else None
        )
        head = self("rev-parse", "-q", "--verify", "HEAD", cwd=root, check=False) or None
        if head is None:
            return GitIdentity(branch=branch, head=None, reason="unborn_branch")
        return GitIdentity(branch=branch, head=head, reason=None)


@pytest.fixture
def git(tmp_path: Path) -> Git:
    return Git(tmp_path)


@pytest.fixture
def repo(git: Git, tmp_path: Path) -> Path:
    path = git.init(tmp_path / "repo")
    git.commit(path)
    return path


def assert_agrees(git: Git, root: Path) -> GitIdentity:
    ours = read(root)
    assert ours == git.says(root)
    return ours


def sha256_supported(git: Git, tmp_path: Path) -> bool:
    probe = tmp_path / "probe256"
    done = git.raw("init", "-q", "--object-format=sha256", str(probe), cwd=tmp_path, check=False)
    return done.returncode == 0


# -- benign repositories: git is the reference ----------------------------------------------


def test_a_branch(git: Git, repo: Path) -> None:
    got = assert_agrees(git, repo)
    assert got.branch == "main"
    assert got.head is not None
    assert len(got.head) == 40
    git("switch", "-q", "-c", "feature/x-1", cwd=repo)
    second = git.commit(repo, "second")
    assert assert_agrees(git, repo) == GitIdentity(branch="feature/x-1", head=second, reason=None)


def test_detached_head(git: Git, repo: Path) -> None:
    first = git("rev-parse", "HEAD", cwd=repo)
    git.commit(repo, "second")
    git("checkout", "-q", "--detach", first, cwd=repo)
    assert assert_agrees(git, repo) == GitIdentity(branch=None, head=first, reason=None)


def test_packed_refs_only_and_loose_refs_winning_over_them(git: Git, repo: Path) -> None:
    git("branch", "other", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    assert not (repo / ".git/refs/heads/main").exists()
    assert "refs/heads/main" in (repo / ".git/packed-refs").read_text(encoding="utf-8")
    assert assert_agrees(git, repo).branch == "main"
    newer = git.commit(repo, "after packing")  # a loose main again, newer than the packed one
    assert (repo / ".git/refs/heads/main").is_file()
    assert assert_agrees(git, repo).head == newer
    git("switch", "-q", "other", cwd=repo)  # packed only
    assert assert_agrees(git, repo).branch == "other"


def test_a_symbolic_ref_chain_names_the_last_target(git: Git, repo: Path) -> None:
    git("symbolic-ref", "refs/heads/alias", "refs/heads/main", cwd=repo)
    git("symbolic-ref", "HEAD", "refs/heads/alias", cwd=repo)
    assert assert_agrees(git, repo).branch == "main"  # what `git symbolic-ref HEAD` prints


def test_head_pointing_outside_branches_has_no_branch(git: Git, repo: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=repo)
    git("update-ref", "refs/remotes/origin/x", head, cwd=repo)
    git("symbolic-ref", "HEAD", "refs/remotes/origin/x", cwd=repo)
    # Decision: only refs/heads/ is a branch (git's --short would print "origin/x").
    assert assert_agrees(git, repo) == GitIdentity(branch=None, head=head, reason=None)


def test_linked_worktrees(git: Git, repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=repo)
    assert (linked / ".git").is_file()
    moved = git.commit(linked, "in the worktree")
    assert assert_agrees(git, linked) == GitIdentity(branch="feature", head=moved, reason=None)
    assert assert_agrees(git, repo).branch == "main"
    detached = tmp_path / "detached"
    git("worktree", "add", "-q", "--detach", str(detached), "main", cwd=repo)
    assert assert_agrees(git, detached).branch is None
    git("pack-refs", "--all", cwd=repo)  # the worktree's branch now lives in common packed-refs
    assert assert_agrees(git, linked).head == moved


def test_a_linked_worktree_of_a_bare_repository_is_a_work_tree(
    git: Git, repo: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "bare.git"
    git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    assert read(bare) == GitIdentity(branch=None, head=None, reason="not_a_git_work_tree")
    assert git.says(bare).reason == "not_a_git_work_tree"
    linked = tmp_path / "from-bare"
    git("worktree", "add", "-q", str(linked), "main", cwd=bare)
    assert assert_agrees(git, linked).branch == "main"


def test_a_submodule_and_a_separate_git_dir(git: Git, repo: Path, tmp_path: Path) -> None:
    outer = git.init(tmp_path / "outer")
    git.commit(outer)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "sub",
        cwd=outer)  # fmt: skip
    sub = outer / "sub"
    assert (sub / ".git").read_text(encoding="utf-8").startswith("gitdir: ../.git/modules/")
    assert assert_agrees(git, sub).head == git("rev-parse", "HEAD", cwd=repo)
    assert assert_agrees(git, outer).branch == "main"
    separate = git.init(tmp_path / "separate", f"--separate-git-dir={tmp_path / 'elsewhere'}")
    git.commit(separate)
    assert (separate / ".git").is_file()
    assert assert_agrees(git, separate).branch == "main"


def test_an_unborn_branch(git: Git, tmp_path: Path) -> None:
    fresh = git.init(tmp_path / "fresh")
    got = assert_agrees(git, fresh)
    assert got == GitIdentity(branch="main", head=None, reason="unborn_branch")
    assert got.to_snapshot() == {"git": None, "git_reason": "unborn_branch"}


def test_sha256_object_format(git: Git, tmp_path: Path) -> None:
    if not sha256_supported(git, tmp_path):
        pytest.skip("this git cannot create a SHA-256 repository (git init --object-format)")
    repo = git.init(tmp_path / "r256", "--object-format=sha256")
    head = git.commit(repo)
    assert len(head) == 64
    assert assert_agrees(git, repo) == GitIdentity(branch="main", head=head, reason=None)
    git("pack-refs", "--all", cwd=repo)
    assert assert_agrees(git, repo).head == head


def test_config_is_parsed_as_git_parses_it(git: Git, tmp_path: Path) -> None:
    if not sha256_supported(git, tmp_path):
        pytest.skip("this git cannot create a SHA-256 repository (git init --object-format)")
    repo = git.init(tmp_path / "r256", "--object-format=sha256")
    head = git.commit(repo)
    # Quotes, escapes, a continuation line, comments, odd case and spacing, a subsection
    # holding a same-named key that must not count.
    (repo / ".git/config").write_text(
        '; comment\n[CORE]RepositoryFormatVersion = "1" # one\n\tbare\t=\tfalse\n'
        '[core "x"]\n\tbare = true\n[core.y]\n\tbare = true\n'
        '[Extensions]\n  objectFormat = "sha"\\\n256 ; the object format\n'
        '[user] name = "a \\"quoted\\" name"\n',
        encoding="utf-8",
    )
    assert assert_agrees(git, repo) == GitIdentity(branch="main", head=head, reason=None)


def test_not_a_repository(git: Git, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "deeper").mkdir(parents=True)
    assert git.says(plain).reason == "not_a_git_work_tree"  # nothing above tmp_path either
    assert read(plain) == GitIdentity(branch=None, head=None, reason="not_a_git_work_tree")
    assert read(plain / "deeper").reason == "not_a_git_work_tree"
    assert read(tmp_path / "missing").reason == "unreadable"
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert read(tmp_path / "a-file").reason == "unreadable"
    assert read(plain).to_snapshot() == {"git": None, "git_reason": "not_a_git_work_tree"}


def test_a_root_inside_a_repository_is_in_its_work_tree(git: Git, repo: Path) -> None:
    """Decision: as `git rev-parse` run in the root, the root may be any directory inside."""
    inner = repo / "services" / "api"
    inner.mkdir(parents=True)
    assert assert_agrees(git, inner) == read(repo)
    via_link = repo.parent / "link-to-inner"
    via_link.symlink_to(inner)
    assert read(via_link) == read(repo)


def test_inside_a_git_directory_or_bare_is_not_a_work_tree(git: Git, repo: Path) -> None:
    for inside in (repo / ".git", repo / ".git" / "refs" / "heads"):
        assert assert_agrees(git, inside).reason == "not_a_git_work_tree"
    git("config", "core.bare", "true", cwd=repo)
    assert assert_agrees(git, repo).reason == "not_a_git_work_tree"


def test_a_git_dir_symlink_is_followed_like_a_gitdir_file(
    git: Git, repo: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "linked-root"
    linked.mkdir()
    (linked / ".git").symlink_to(repo / ".git")
    assert assert_agrees(git, linked) == read(repo)


# The config parser against `git config --list` on drawn files: the same values (a key without
# `=` has none), or both refuse the file.
CONFIG_KEYS = ("core.repositoryformatversion", "core.bare", "extensions.objectformat",
               "extensions.refstorage")  # fmt: skip
HEADERS = ["[core]", "[Core]", "[CORE]", "[extensions]", '[core "x"]', '[core "a\\"b"]',
           "[core.x]", "[user]", "[core", "[ core]", "[]", '[core "x]']  # fmt: skip
KEYS = ["bare", "BARE", "objectFormat", "repositoryformatversion", "refstorage", "other",
        "x-1", "1bad", "-bad"]  # fmt: skip
SEPARATORS = [" = ", "=", "", "\t=\t", " =", "  ", " # c", " x"]
VALUES = ["true", "sha256", '"sha" "256"', '"a b"', "a\\\nb", "x # c", '"x # c"', "x ; c",
          "\\t", "\\q", '"open', "  spaced  out  ", '\\"', "", "1", '"" x', "a\\",
          "\xc2\xa0x\xc2\xa0", "a\rb"]  # fmt: skip
FILLER = ["", "# comment", "; comment", "   ", "\t"]


@st.composite
def config_files(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["header", "entry", "entry", "entry", "filler"]))
        if kind == "header":
            lines.append(draw(st.sampled_from(HEADERS)))
        elif kind == "filler":
            lines.append(draw(st.sampled_from(FILLER)))
        else:
            key, sep = draw(st.sampled_from(KEYS)), draw(st.sampled_from(SEPARATORS))
            value = draw(st.sampled_from(VALUES)) if "=" in sep else ""
            lines.append(draw(st.sampled_from(["", "\t", "  "])) + key + sep + value)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return (eol.join(lines) + draw(st.sampled_from([eol, ""]))).encode("utf-8")


@pytest.fixture(scope="module")
def config_git(tmp_path_factory: pytest.TempPathFactory) -> tuple[Git, Path]:
    base = tmp_path_factory.mktemp("config")
    return Git(base), base / "config"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=config_files())
def test_config_parsing_agrees_with_git_config(config_git: tuple[Git, Path], body: bytes) -> None:
    git, path = config_git
    path.write_bytes(body)
    assert GIT is not None
    done = subprocess.run([GIT, "config", "-f", str(path), "-z", "--list"], env=git.env,
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        with pytest.raises(_Unavailable, match="malformed"):
            _parse_config(body)
        return
    ours = _parse_config(body)
    theirs: dict[str, str | None] = {}
    for entry in done.stdout.split(b"\0")[:-1]:
        key, newline, value = entry.decode("latin-1").partition("\n")
        if key in CONFIG_KEYS:
            theirs[key] = value if newline else None
    assert ours == theirs, body


# -- ownership above the root ----------------------------------------------------------------


def test_a_repository_above_the_root_must_be_the_owners(git: Git, repo: Path) -> None:
    inner = repo / "inner"
    inner.mkdir()
    me = repo.stat().st_uid
    assert read(inner, owner_uid=me) == read(repo)
    stranger = me + 4242
    assert read(inner, owner_uid=stranger) == GitIdentity(
        branch=None, head=None, reason="dubious_ownership"
    )
    # The root itself is the person's choice: read whoever owns it.
    assert read(repo, owner_uid=stranger) == read(repo)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root: chown")
def test_a_planted_repository_above_the_root_is_refused(git: Git, repo: Path) -> None:
    inner = repo / "inner"
    inner.mkdir()
    for path in (repo, repo / ".git"):
        os.chown(path, 4242, 4242)
    assert read(inner).reason == "dubious_ownership"
    assert read(repo).head is not None


# -- hostile and broken repositories ---------------------------------------------------------


def test_a_hostile_repository_runs_nothing(git: Git, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = git.init(tmp_path / "hostile")
    head = git.commit(repo)

    def script(name: str) -> str:
        path = tmp_path / f"{name}.sh"
        path.write_text(f"#!/bin/sh\ntouch {markers / name}\ncat\n", encoding="utf-8")
        path.chmod(0o755)
        return str(path)

    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-checkout", "reference-transaction"):
        shutil.copy(script(hook), hooks / hook)
    git("config", "core.fsmonitor", script("fsmonitor"), cwd=repo)
    git("config", "filter.evil.smudge", script("smudge"), cwd=repo)
    git("config", "filter.evil.clean", script("clean"), cwd=repo)
    (repo / ".gitattributes").write_text("* filter=evil\n", encoding="utf-8")

    _process_starts.clear()
    _watching.append(True)
    try:
        got = read_git_identity(str(repo))
    finally:
        _watching.clear()
    assert got == GitIdentity(branch="main", head=head, reason=None)
    assert _process_starts == []
    assert sorted(p.name for p in markers.iterdir()) == []

    # The trap is real: git itself, with the repository's config, runs every one of them.
    (repo / "file.txt").write_text("changed", encoding="utf-8")
    git.raw("add", "file.txt", cwd=repo)
    git.raw("status", cwd=repo)
    git.raw("checkout", "-q", "-b", "other", cwd=repo)
    (repo / "file.txt").unlink()
    git.raw("checkout", "--", "file.txt", cwd=repo)
    assert sorted(p.name for p in markers.iterdir()) == [
        "clean", "fsmonitor", "post-checkout", "reference-transaction", "smudge",
    ]  # fmt: skip


def test_the_reader_has_no_way_to_start_a_process() -> None:
    """Beyond the run above: the module imports nothing that starts processes or runs git."""
    source = Path(git_module.__file__).read_text(encoding="utf-8")
    imported: set[str] = set()
    os_calls: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            os_calls.add(node.attr)
    assert imported <= {"__future__", "os", "re", "stat", "collections", "typing", "pydantic",
                        "rutter_core"}  # fmt: skip
    starting = ("system", "popen", "exec", "spawn", "posix_spawn", "fork", "startfile")
    assert {call for call in os_calls if call.startswith(starting)} == set()
    assert "open" in os_calls  # the scan sees the module's os calls


HEX40 = "a" * 40


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (b"garbage\n", "malformed"),
        (b"ref: refs/heads/ma\0in\n", "malformed"),
        (b"ref: refs/heads/\xff\xfe\n", "malformed"),
        (b"ref: ../../../../etc/passwd\n", "malformed"),
        (b"ref: refs/heads/../../../config\n", "malformed"),
        (b"ref: refs/heads/x.lock\n", "malformed"),
        (b"ref: HEAD\n", "malformed"),
        (b"ref: \n", "malformed"),
        (b"0" * 40 + b"\n", "malformed"),
        (b"a" * 39 + b"\n", "malformed"),
        (b"a" * 64 + b"\n", "malformed"),
        (b"g" * 40 + b"\n", "malformed"),
        (b"0" * (10 * 1024 * 1024), "unreadable"),
    ],
    ids=lambda value: repr(value)[:40],
)
def test_a_malformed_head_is_a_reason(repo: Path, head: bytes, reason: str) -> None:
    (repo / ".git" / "HEAD").write_bytes(head)
    assert read(repo) == GitIdentity(branch=None, head=None, reason=reason)


def test_a_detached_head_in_capitals_reads_as_git_prints_it(git: Git, repo: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=repo)
    (repo / ".git" / "HEAD").write_text(head.upper() + "\n", encoding="ascii")
    assert assert_agrees(git, repo) == GitIdentity(branch=None, head=head, reason=None)


def test_a_symbolic_ref_cycle_ends(git: Git, repo: Path) -> None:
    heads = repo / ".git" / "refs" / "heads"
    (heads / "a").write_text("ref: refs/heads/b\n", encoding="ascii")
    (heads / "b").write_text("ref: refs/heads/a\n", encoding="ascii")
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/a\n", encoding="ascii")
    assert read(repo).reason == "malformed"


def test_a_sha1_head_in_a_sha256_repository_is_malformed(git: Git, tmp_path: Path) -> None:
    if not sha256_supported(git, tmp_path):
        pytest.skip("this git cannot create a SHA-256 repository (git init --object-format)")
    repo = git.init(tmp_path / "r256", "--object-format=sha256")
    git.commit(repo)
    (repo / ".git" / "HEAD").write_text(HEX40 + "\n", encoding="ascii")
    assert read(repo).reason == "malformed"


def _fifo(path: Path) -> None:
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


Breaker = Callable[[Path], None]


def _break_git_entry_fifo(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    _fifo(repo / ".git")


def _break_git_entry_loop(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    (repo / ".git").symlink_to(repo / ".git")


def _break_git_entry_dangling(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    (repo / ".git").symlink_to(repo / "nowhere")


def _break_head_link(repo: Path) -> None:
    head = repo / ".git" / "HEAD"
    target = repo / ".git" / "HEAD.real"
    head.rename(target)
    head.symlink_to(target)


def _break_ref_fifo(repo: Path) -> None:
    _fifo(repo / ".git" / "refs" / "heads" / "main")


def _break_ref_link(repo: Path) -> None:
    ref = repo / ".git" / "refs" / "heads" / "main"
    ref.rename(repo / "main-ref")
    ref.symlink_to(repo / "main-ref")


def _break_packed_fifo(repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "main").unlink()
    _fifo(repo / ".git" / "packed-refs")


def _break_packed_garbage(repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "main").unlink()
    (repo / ".git" / "packed-refs").write_bytes(b"# pack-refs with: peeled\nnot-a-line\n")


def _break_packed_long_line(repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "main").unlink()
    (repo / ".git" / "packed-refs").write_bytes(b"x" * (1024 * 1024))


def _break_config(body: bytes) -> Breaker:
    def breaker(repo: Path) -> None:
        (repo / ".git" / "config").write_bytes(body)

    return breaker


def _break_gitfile(body: bytes) -> Breaker:
    def breaker(repo: Path) -> None:
        shutil.rmtree(repo / ".git")
        (repo / ".git").write_bytes(body)

    return breaker


def _break_commondir(body: bytes) -> Breaker:
    def breaker(repo: Path) -> None:
        (repo / ".git" / "commondir").write_bytes(body)

    return breaker


BROKEN: dict[str, tuple[Breaker, str]] = {
    "git-entry-fifo": (_break_git_entry_fifo, "unreadable"),
    "git-entry-symlink-loop": (_break_git_entry_loop, "unreadable"),
    "git-entry-dangling-link": (_break_git_entry_dangling, "unreadable"),
    "head-symlink": (_break_head_link, "unreadable"),
    "ref-fifo": (_break_ref_fifo, "unreadable"),
    "ref-symlink": (_break_ref_link, "unreadable"),
    "packed-refs-fifo": (_break_packed_fifo, "unreadable"),
    "packed-refs-garbage": (_break_packed_garbage, "malformed"),
    "packed-refs-one-long-line": (_break_packed_long_line, "malformed"),
    "config-huge": (_break_config(b"#" * (CONFIG_MAX_BYTES + 1)), "unreadable"),
    "config-bad-line": (_break_config(b"[core]\n\t= 1\n"), "malformed"),
    "config-unclosed-section": (_break_config(b"[core\n"), "malformed"),
    "config-unclosed-quote": (_break_config(b'[core]\nbare = "true\n'), "malformed"),
    "config-bare-not-a-boolean": (_break_config(b"[core]\nbare = maybe\n"), "malformed"),
    "format-version-2": (
        _break_config(b"[core]\nrepositoryformatversion = 2\n"),
        "unsupported_repository",
    ),
    "object-format-sha512": (
        _break_config(b"[core]\nrepositoryformatversion = 1\n[extensions]\nobjectformat=sha512"),
        "unsupported_repository",
    ),
    "ref-storage-reftable": (
        _break_config(b"[core]\nrepositoryformatversion = 1\n[extensions]\nrefstorage=reftable"),
        "unsupported_repository",
    ),
    "extension-in-format-0": (
        _break_config(b"[extensions]\nobjectformat = sha256\n"),
        "unsupported_repository",
    ),
    "gitfile-garbage": (_break_gitfile(b"not a gitdir line\n"), "malformed"),
    "gitfile-nul": (_break_gitfile(b"gitdir: /tmp\0/x\n"), "malformed"),
    "gitfile-empty-target": (_break_gitfile(b"gitdir: \n"), "malformed"),
    "gitfile-huge": (_break_gitfile(b"gitdir: " + b"a" * 100_000), "unreadable"),
    "gitfile-to-nothing": (_break_gitfile(b"gitdir: /nonexistent/rutter/x\n"), "unreadable"),
    "gitfile-to-a-plain-dir": (_break_gitfile(b"gitdir: ..\n"), "malformed"),
    "commondir-to-a-plain-dir": (_break_commondir(b"/\n"), "malformed"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_repository_is_a_reason_never_a_crash_or_a_hang(repo: Path, case: str) -> None:
    breaker, reason = BROKEN[case]
    breaker(repo)
    assert read(repo) == GitIdentity(branch=None, head=None, reason=reason)


def test_a_missing_branch_is_unborn_not_broken(repo: Path) -> None:
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/never-made\n", encoding="ascii")
    assert read(repo) == GitIdentity(branch="never-made", head=None, reason="unborn_branch")


def test_a_directory_where_a_ref_would_be_is_no_ref(git: Git, repo: Path) -> None:
    (repo / ".git" / "refs" / "heads" / "dir" / "deeper").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/dir\n", encoding="ascii")
    assert assert_agrees(git, repo) == GitIdentity(branch="dir", head=None, reason="unborn_branch")


# -- the snapshot shape and drift ------------------------------------------------------------


def test_snapshot_shape_and_round_trip(git: Git, repo: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=repo)
    got = read(repo)
    assert got.to_snapshot() == {"git": {"branch": "main", "head": head}, "git_reason": None}
    assert GitIdentity.from_snapshot(got.to_snapshot()) == got
    git("checkout", "-q", "--detach", cwd=repo)
    detached = read(repo)
    assert detached.to_snapshot() == {"git": {"branch": None, "head": head}, "git_reason": None}
    assert GitIdentity.from_snapshot(detached.to_snapshot()) == detached
    none = GitIdentity(branch=None, head=None, reason="not_a_git_work_tree")
    assert GitIdentity.from_snapshot(none.to_snapshot()) == none
    with pytest.raises(ValueError, match="branch, head"):
        GitIdentity.from_snapshot({"git": {"head": head}, "git_reason": None})


def test_a_secret_in_a_branch_name_is_redacted_in_the_snapshot(git: Git, repo: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
    git("switch", "-q", "-c", f"fix/{token}", cwd=repo)
    got = read(repo)
    assert got.branch == f"fix/{token}"
    snapshot = got.to_snapshot()
    assert snapshot["git"]["branch"] == "fix/[REDACTED:github_token]"
    assert token not in repr(snapshot)
    assert git_drift(GitIdentity.from_snapshot(snapshot), got) == GitDrift(
        branch_changed=False, head_changed=False
    )


def test_drift(git: Git, repo: Path, tmp_path: Path) -> None:
    before = read(repo)
    assert git_drift(before, read(repo)) == GitDrift(branch_changed=False, head_changed=False)
    git.commit(repo, "moved")
    moved = read(repo)
    assert git_drift(before, moved) == GitDrift(branch_changed=False, head_changed=True)
    git("switch", "-q", "-c", "other", cwd=repo)
    assert git_drift(moved, read(repo)) == GitDrift(branch_changed=True, head_changed=False)
    git("checkout", "-q", "--detach", cwd=repo)
    assert git_drift(moved, read(repo)) == GitDrift(branch_changed=True, head_changed=False)
    gone = GitIdentity(branch=None, head=None, reason="not_a_git_work_tree")
    broken = GitIdentity(branch=None, head=None, reason="unreadable")
    assert git_drift(gone, broken) == GitDrift(branch_changed=False, head_changed=False)
    assert git_drift(gone, moved) == GitDrift(branch_changed=True, head_changed=True)
    fresh = git.init(tmp_path / "fresh")
    unborn = read(fresh)
    born_head = git.commit(fresh)
    assert git_drift(unborn, read(fresh)) == GitDrift(branch_changed=True, head_changed=True)
    assert read(fresh).head == born_head


@pytest.mark.parametrize(
    "fields",
    [
        {"branch": None, "head": None, "reason": None},
        {"branch": None, "head": HEX40, "reason": "unreadable"},
        {"branch": "main", "head": None, "reason": "not_a_git_work_tree"},
        {"branch": None, "head": "A" * 40, "reason": None},
        {"branch": None, "head": "a" * 41, "reason": None},
        {"branch": None, "head": None, "reason": "no_such_reason"},
        {"branch": None, "head": HEX40, "reason": None, "extra": 1},
    ],
)
def test_the_identity_model_refuses_inconsistent_values(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GitIdentity(**fields)
