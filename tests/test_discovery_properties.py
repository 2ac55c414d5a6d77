"""Property tests of discovery (docs/reference/discovery.md) on random real directory trees.

Each example builds a fresh tree from a small grammar (directories `a`, `b`, `sub`; instruction
files at random levels; rules with nested directories and non-Markdown files; UTF-8 content with
CRLF/CR/BOM; sometimes a symlink, a FIFO, bad bytes, empty content, a linked directory, an
invalid ignore line) and checks discovery against docs/reference/discovery.md and against a small
model of it written from those rules (`expect`).
"""

from __future__ import annotations

import codecs
import os
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.ignore import IgnoreRules
from rutter_core.discovery.snapshot import DEFAULT_LIMITS, Limits, Snapshot, snapshot_fingerprint
from rutter_core.discovery.walk import discover
from rutter_core.kernel.errors import DISCOVERY_ERROR_CODES, RutterError

IGNORE_REL = ".prayu/instructions.ignore"
OUTSIDE_MARK = "OUTSIDE-THE-WORKSPACE"
BOM = codecs.BOM_UTF8
HOUR_NS = 3600 * 10**9
# Each example builds and removes a whole tree: on tmpfs when there is one (much faster than a
# disk-backed /tmp), otherwise in the default temporary directory.
TREE_BASE = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None

DIR_NAMES = ("a", "b", "sub")
OVERRIDE = "AGENTS.override.md"
AGENTS = "AGENTS.md"
SLOT_FILES = (OVERRIDE, AGENTS, "CLAUDE.md", ".claude/CLAUDE.md", ".prayu/instructions.md")
# Names that look like sources but are not: never delivered, so never a reason to fail.
DECOYS = ("agents.md", "Claude.md", "claude.md", "notes.md", ".claude/notes.md", ".prayu/x.md")
# "b.Md" sorts before the directory "b/" in byte order ("." < "/").
RULE_NAMES = ("r.md", "Z.MD", "b.Md", "notes.txt", "x.mdx", "README")

WORDS = (
    "rule ",
    "use tabs\r\n",
    "run the tests\n",
    "keep \u4e2d\u6587\r",
    "caf\u00e9 ",
    "w\U0001f642",
)
BLANK_BODIES = (b"", b" ", b"\n", b" \r\n\t", BOM, BOM + b"\r\n")
INVALID_UTF8_BODIES = (
    b"bad \xff byte\n",
    b"caf\xc3",
    b"\xed\xa0\x80\n",
    b"\xc0\xaf",
    BOM + b"a\xfe",
)
NUL_BODIES = (b"nul\x00byte\n", b"\x00", BOM + b"\x00\n")

PATTERN_SEGMENTS = (
    "a",
    "b",
    "sub",
    "*",
    "**",
    "?",
    "[ab]",
    "[!a]",
    "*.md",
    "*.MD",
    "a*",
    OVERRIDE,
    AGENTS,
    "CLAUDE.md",
    ".claude",
    ".prayu",
    "rules",
    "instructions.md",
    "r.md",
    "x..md",  # `..` inside a name is not a `..` segment: valid
    "...",
)
NOISE_LINES = ("", "# comment", "#!not a negation", "   ", "!", "/", "# a\\b ../x")
# Invalid by docs/reference/discovery.md: a `..` segment, a backslash, NUL, a drive letter.
INVALID_LINES = ("../x.md", "a/../b", "..", "!../AGENTS.md", "a\\b.md", "C:/x.md", "x\x00.md")

NodeKind = Literal["file", "link", "fifo"]
LinkTo = Literal["outside_file", "outside_dir", "dangling", "root", "inside_file"]
LINKED_DIR = "linked"
"""Where `inside_file` links lead (docs/reference/discovery.md): one regular file per link, never on
a chain."""


def linked_rel(rel: str) -> str:
    """The file the `inside_file` link at `rel` ends at."""
    return f"{LINKED_DIR}/{rel.replace('/', '_')}"


def linked_body(rel: str) -> bytes:
    return f"linked from {rel}\n".encode()


@dataclass(frozen=True)
class Node:
    kind: NodeKind
    body: bytes = b""
    link_to: LinkTo = "outside_file"


@dataclass
class Tree:
    dirs: list[str]  # real directories below the root, workspace-relative
    nodes: dict[str, Node]  # files, links and FIFOs by workspace-relative path
    dir_links: set[str]  # directories that are links to a directory outside the workspace
    ignore: list[str] | None  # lines of the root ignore file
    target: str  # as passed to discover
    canonical_target: str
    target_dir: str  # "" for the root
    clean: bool  # no bad ingredient anywhere (links, FIFOs, bad bytes, empty, invalid lines)

    @property
    def ignore_bytes(self) -> bytes:
        assert self.ignore is not None
        return "\n".join(self.ignore).encode("utf-8") + b"\n"

    @property
    def ignore_invalid(self) -> bool:
        return self.ignore is not None and any(line in INVALID_LINES for line in self.ignore)


def join(*parts: str) -> str:
    return "/".join(part for part in parts if part)


# -- the grammar ------------------------------------------------------------------------------


# Text pieces: ASCII, non-ASCII (2-, 3- and 4-byte UTF-8), line breaks of every style, and
# characters `str.strip` treats as whitespace (NEL, LINE SEPARATOR) or that look like a BOM.
TEXT_ALPHABET = st.sampled_from(
    [
        *("a", "z", " ", "\t", "\n", "\r", "#", "-", "\u00e9", "\u4e2d", "\U0001f642"),
        *("\x85", "\u2028", "\ufeff", "\x7f"),  # whitespace to str.strip, BOM look-alike, DEL
    ]
) | st.characters(codec="utf-8", exclude_characters="\x00")


@st.composite
def good_bodies(draw: st.DrawFn) -> bytes:
    # A leading word: never blank, and an ASCII letter the mutation test can flip.
    text = draw(st.sampled_from(WORDS)) + draw(st.text(TEXT_ALPHABET, max_size=12))
    return (BOM if draw(st.booleans()) else b"") + text.encode("utf-8")


@st.composite
def nodes(draw: st.DrawFn, *, allow_bad: bool, override: bool = False, md: bool = True) -> Node:
    choices = ["good"] * 6
    if md:
        # followed (docs/reference/discovery.md); a non-.md rule link is not
        choices.append("inside_link")
    if override:
        choices += ["blank"] * 2  # a blank override is not bad: the level falls back
    if allow_bad:
        choices += ["link", "fifo", "invalid", "nul"]
        if md:
            choices.append("blank")  # an empty source: empty_source
    choice = draw(st.sampled_from(choices))
    if choice == "good":
        return Node("file", draw(good_bodies()))
    if choice == "inside_link":
        return Node("link", link_to="inside_file")
    if choice == "blank":
        return Node("file", draw(st.sampled_from(BLANK_BODIES)))
    if choice == "invalid":
        return Node("file", draw(st.sampled_from(INVALID_UTF8_BODIES)))
    if choice == "nul":
        return Node("file", draw(st.sampled_from(NUL_BODIES)))
    if choice == "fifo":
        return Node("fifo")
    link_to: LinkTo = draw(
        st.sampled_from(["outside_file", "outside_dir", "dangling", "root", "inside_file"])
    )
    return Node("link", link_to=link_to)


def is_bad(node: Node, *, override: bool = False) -> bool:
    if node.kind == "link" and node.link_to == "inside_file":
        return False  # followed (docs/reference/discovery.md)
    if node.kind != "file":
        return True
    body = node.body.removeprefix(BOM)
    if b"\x00" in body:
        return True
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not override and not text.strip()


@st.composite
def pattern_lines(draw: st.DrawFn) -> str:
    segments = draw(st.lists(st.sampled_from(PATTERN_SEGMENTS), min_size=1, max_size=3))
    negate = "!" if draw(st.integers(0, 3)) == 0 else ""
    anchor = "/" if draw(st.booleans()) else ""
    trailing = "/" if draw(st.integers(0, 3)) == 0 else ""
    return negate + anchor + "/".join(segments) + trailing


@st.composite
def trees(draw: st.DrawFn, *, allow_bad: bool | None = None) -> Tree:
    if allow_bad is None:
        allow_bad = draw(st.booleans())
    raw_dirs = draw(
        st.lists(st.lists(st.sampled_from(DIR_NAMES), min_size=1, max_size=3), max_size=4)
    )
    dirs: set[str] = set()
    for parts in raw_dirs:
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    levels = ["", *sorted(dirs)]

    nodes_by_path: dict[str, Node] = {}
    bad = False

    def put(rel: str, node: Node, *, harmless: bool = False, override: bool = False) -> None:
        nonlocal bad
        nodes_by_path[rel] = node
        bad = bad or (not harmless and is_bad(node, override=override))

    for level in levels:
        for name in SLOT_FILES:
            if draw(st.booleans()):
                override = name == OVERRIDE
                put(
                    join(level, name),
                    draw(nodes(allow_bad=allow_bad, override=override)),
                    override=override,
                )
        for _ in range(draw(st.integers(0, 3))):
            sub = draw(st.lists(st.sampled_from(DIR_NAMES), max_size=2))
            name = draw(st.sampled_from(RULE_NAMES))
            md = name.lower().endswith(".md")
            node = draw(nodes(allow_bad=allow_bad, md=md))
            if not md and node.kind == "file":
                put(join(level, ".prayu/rules", *sub, name), node, harmless=True)
            else:
                put(join(level, ".prayu/rules", *sub, name), node)
                bad = bad or (node.kind == "link" and not md)  # a linked non-rule: refused
    for _ in range(draw(st.integers(0, 2))):
        rel = join(draw(st.sampled_from(levels)), draw(st.sampled_from(DECOYS)))
        put(rel, draw(nodes(allow_bad=allow_bad)), harmless=True)

    # The target: a directory, or a file in one (existing or not, maybe a link or FIFO).
    # Deeper targets first (hypothesis favours early choices): longer chains, more levels.
    target_dir = draw(st.sampled_from(sorted(levels, key=lambda d: (-d.count("/"), -len(d), d))))
    form = draw(st.sampled_from(["dir", "file", "missing_file"]))
    if form == "dir":
        canonical = target_dir or "."
        target = draw(st.sampled_from([canonical, f"./{canonical}", f"{canonical}/"]))
    else:
        canonical = join(target_dir, "x.go")
        target = draw(st.sampled_from([canonical, f"./{canonical}", canonical.replace("/", "//")]))
        if form == "file":
            node = Node("file", b"package x\n")
            if allow_bad:
                node = draw(st.sampled_from([node, Node("fifo"), Node("link")]))
            nodes_by_path[canonical] = node
            bad = bad or node.kind == "link"  # a FIFO target is fine: it is never read

    # Sometimes a directory (on the chain or not, or a control directory) is a link.
    dir_links: set[str] = set()
    if allow_bad and draw(st.integers(0, 3)) == 0:
        candidates = sorted(dirs) + [
            join(level, sub) for level in levels for sub in (".claude", ".prayu", ".prayu/rules")
        ]
        link = draw(st.sampled_from(candidates))
        dir_links.add(link)
        bad = True
        dirs = {d for d in dirs if d != link and not d.startswith(link + "/")}
        nodes_by_path = {
            rel: node for rel, node in nodes_by_path.items() if not rel.startswith(link + "/")
        }

    ignore: list[str] | None = None
    if draw(st.booleans()) and ".prayu" not in dir_links:
        line_strategy = pattern_lines() | st.sampled_from(NOISE_LINES)
        if allow_bad:
            line_strategy = line_strategy | st.sampled_from(INVALID_LINES)
        ignore = draw(st.lists(line_strategy, max_size=6))
        bad = bad or any(line in INVALID_LINES for line in ignore)

    return Tree(
        dirs=sorted(dirs),
        nodes=nodes_by_path,
        dir_links=dir_links,
        ignore=ignore,
        target=target,
        canonical_target=canonical,
        target_dir=target_dir,
        clean=not bad,
    )


# -- building it on disk ----------------------------------------------------------------------


def build(base: Path, tree: Tree) -> Path:
    root = base / "ws"
    root.mkdir()
    # What links point to: content that must never show up in a snapshot.
    outside = base / "outside"
    if tree.dir_links or any(node.kind == "link" for node in tree.nodes.values()):
        for rel in ("", "a", "b", "sub", "rules"):
            (outside / rel).mkdir(parents=True, exist_ok=True)
            for name in (AGENTS, "CLAUDE.md", "r.md"):
                (outside / rel / name).write_text(f"{OUTSIDE_MARK}\n", encoding="utf-8")
    link_targets: dict[LinkTo, Path] = {
        "outside_file": outside / AGENTS,
        "outside_dir": outside,
        "dangling": root / "missing",
        "root": root,
    }
    for rel in tree.dirs:
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel in sorted(tree.dir_links):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(outside, target_is_directory=True)
    for rel, node in sorted(tree.nodes.items()):
        assert not any(rel.startswith(link + "/") for link in tree.dir_links)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if node.kind == "file":
            path.write_bytes(node.body)
        elif node.kind == "fifo":
            os.mkfifo(path)
        elif node.link_to == "inside_file":
            final = root / linked_rel(rel)
            final.parent.mkdir(exist_ok=True)
            final.write_bytes(linked_body(rel))
            path.symlink_to(final)  # absolute, into the workspace
        else:
            path.symlink_to(link_targets[node.link_to])
    if tree.ignore is not None:
        (root / ".prayu").mkdir(exist_ok=True)
        (root / IGNORE_REL).write_bytes(tree.ignore_bytes)
    return root


# -- the model --------------------------------------------------------------------------------


@dataclass
class Expectation:
    errors: set[tuple[str, str]] = field(default_factory=set)  # (code, path): one must happen
    sources: list[tuple[str, str, str, int, int, str, int]] = field(default_factory=list)
    ignored: set[tuple[str, str, str | None]] = field(default_factory=set)
    read_sizes: dict[str, int] = field(default_factory=dict)  # every source file read
    rules_nesting: int = 0  # most directories below a `.prayu/rules/` on the chain
    rules: IgnoreRules = field(default_factory=IgnoreRules.empty)


def decoded(node: Node, rel: str, *, follow: bool = True) -> tuple[str | None, str | None]:
    """(error code, text) of a node at `rel` as discovery must see it (`follow`: a link there
    is followed when it stays inside the workspace)."""
    if node.kind == "link" and follow and node.link_to == "inside_file":
        return None, linked_body(rel).decode()
    if node.kind == "link":
        return "symlink", None
    if node.kind == "fifo":
        return "not_regular_file", None
    if b"\x00" in node.body:
        return "nul_byte", None
    try:
        text = node.body.removeprefix(BOM).decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8", None
    return None, text.replace("\r\n", "\n").replace("\r", "\n")


def expect(tree: Tree) -> Expectation:
    """What docs/reference/discovery.md says discovery yields for `tree` with the default limits."""
    out = Expectation()
    if tree.ignore is not None:
        if tree.ignore_invalid:
            out.errors.add(("invalid_ignore", IGNORE_REL))
        else:
            try:
                out.rules = IgnoreRules.parse(tree.ignore_bytes)
            except RutterError as exc:
                pytest.fail(f"valid ignore lines {tree.ignore!r} were rejected: {exc.message}")

    def excluded(rel: str) -> bool:
        if out.rules.match(rel) is None:
            return False
        out.ignored.add((rel, "ignore_file", None))
        return True

    def read(rel: str, node: Node, *, follow: bool = True) -> str | None:
        code, text = decoded(node, rel, follow=follow)
        if code is not None:
            out.errors.add((code, rel))
        elif node.kind == "file":
            out.read_sizes[rel] = len(node.body)
        else:  # a followed link: the file it ends at is read
            out.read_sizes[rel] = len(linked_body(rel))
        return text

    def deliver(rel: str, kind: str, level: str, slot: int, node: Node, text: str) -> bool:
        if not text.strip():
            out.errors.add(("empty_source", rel))
            return False
        depth = level.count("/") + 1 if level else 0
        size = len(linked_body(rel)) if node.kind == "link" else len(node.body)
        row = (rel, kind, level or ".", depth, 100 * depth + slot, text, size)
        out.sources.append(row)
        return True

    nodes_ = tree.nodes
    chain = tree.target_dir.split("/") if tree.target_dir else []
    levels = [""] + ["/".join(chain[: i + 1]) for i in range(len(chain))]
    node = nodes_.get(tree.canonical_target)
    if tree.canonical_target != (tree.target_dir or ".") and node and node.kind == "link":
        out.errors.add(("symlink", tree.canonical_target))
    for level in levels:
        if level in tree.dir_links:
            out.errors.add(("symlink", level))
            break
        linked = {
            sub
            for sub in (".claude", ".prayu", ".prayu/rules")
            if join(level, sub) in tree.dir_links
        }
        for sub in linked:
            out.errors.add(("symlink", join(level, sub)))

        # slot 0: a non-blank, non-ignored override, else AGENTS.md
        override_rel, agents_rel = join(level, OVERRIDE), join(level, AGENTS)
        chosen = False
        override = nodes_.get(override_rel)
        if override is not None and not excluded(override_rel):
            text = read(override_rel, override)
            if text is not None and not text.strip():
                out.ignored.add((override_rel, "blank_override", None))
            elif text is not None:
                chosen = deliver(override_rel, "agents_override", level, 0, override, text)
        agents = nodes_.get(agents_rel)
        if agents is not None and not excluded(agents_rel):
            followed = agents.kind == "link" and agents.link_to == "inside_file"
            if chosen and (agents.kind == "file" or followed):
                out.ignored.add((agents_rel, "superseded", override_rel))
            elif chosen:  # a superseded AGENTS.md must still be a regular file
                out.errors.add(
                    ("symlink" if agents.kind == "link" else "not_regular_file", agents_rel)
                )
            else:
                text = read(agents_rel, agents)
                if text is not None:
                    deliver(agents_rel, "agents", level, 0, agents, text)

        # slots 1-3
        for name, kind, slot, hidden in (
            ("CLAUDE.md", "claude", 1, False),
            (".claude/CLAUDE.md", "claude_dir", 2, ".claude" in linked),
            (".prayu/instructions.md", "prayu_instructions", 3, ".prayu" in linked),
        ):
            rel = join(level, name)
            source = nodes_.get(rel)
            if hidden or source is None or excluded(rel):
                continue
            text = read(rel, source)
            if text is not None:
                deliver(rel, kind, level, slot, source, text)

        # slots 10+: rules, in byte order of their path
        if linked & {".prayu", ".prayu/rules"}:
            continue
        prefix = join(level, ".prayu/rules/")
        index = 0
        for rel in sorted((rel for rel in nodes_ if rel.startswith(prefix)), key=str.encode):
            out.rules_nesting = max(out.rules_nesting, rel[len(prefix) :].count("/"))
            rule = nodes_[rel]
            if rule.kind == "file" and not rel.lower().endswith(".md"):
                continue
            if excluded(rel):
                continue
            text = read(rel, rule, follow=rel.lower().endswith(".md"))
            if text is not None and deliver(rel, "prayu_rule", level, 10 + index, rule, text):
                index += 1
    return out


# -- running discovery ------------------------------------------------------------------------

Outcome = Snapshot | RutterError


def attempt(
    root: Path, target: str, reader: FileReader, limits: Limits = DEFAULT_LIMITS
) -> Outcome:
    """Discovery's result or its typed error; any other exception fails the test (d)."""
    try:
        return discover("props", str(root), target, reader=reader, limits=limits)
    except RutterError as exc:
        error = exc
    assert error.code in DISCOVERY_ERROR_CODES, error
    assert isinstance(error, DISCOVERY_ERROR_CODES[error.code]), error
    assert error.message
    return error


def comparable(outcome: Outcome) -> object:
    if isinstance(outcome, RutterError):
        return (type(outcome), outcome.code, outcome.path, outcome.message, outcome.details)
    data = outcome.to_json()
    del data["loaded_at"]
    for source in data["sources"]:
        del source["loaded_at"]
    return data


def future_clock() -> Callable[[], int]:
    """A clock an hour ahead: every entry looks old enough to cache (no racy re-reads)."""
    return lambda: time.time_ns() + HOUR_NS


def check_structure(snapshot: Snapshot, tree: Tree, root: Path) -> None:
    """Properties (b) and (c) and the fingerprint half of (f)."""
    sources = snapshot.sources
    assert [source.ordinal for source in sources] == list(range(1, len(sources) + 1))
    precedences = [source.precedence for source in sources]
    assert precedences == sorted(set(precedences)), "precedence must strictly increase"
    chain = tree.target_dir.split("/") if tree.target_dir else []
    chain_scopes = ["."] + ["/".join(chain[: i + 1]) for i in range(len(chain))]
    slots = {
        "agents": 0,
        "agents_override": 0,
        "claude": 1,
        "claude_dir": 2,
        "prayu_instructions": 3,
    }
    rule_slots: dict[str, list[int]] = {}
    for source in sources:
        assert source.scope in chain_scopes, (source.path, chain_scopes)
        assert source.depth == chain_scopes.index(source.scope)
        slot = source.precedence - 100 * source.depth
        assert slot in {0, 1, 2, 3} or slot >= 10
        if source.kind == "prayu_rule":
            rule_slots.setdefault(source.scope, []).append(slot)
        else:
            assert slot == slots[source.kind], source
        local = source.path if source.scope == "." else source.path.removeprefix(source.scope + "/")
        assert local != source.path or source.scope == "."
        if source.kind == "prayu_rule":
            assert local.startswith(".prayu/rules/")
            assert local.lower().endswith(".md")
        else:
            expected_name = {
                "agents": AGENTS,
                "agents_override": OVERRIDE,
                "claude": "CLAUDE.md",
                "claude_dir": ".claude/CLAUDE.md",
                "prayu_instructions": ".prayu/instructions.md",
            }[source.kind]
            assert local == expected_name
        path = root / source.path
        if source.link_target is not None:  # a followed link: its own file is the link
            assert path.is_symlink()
            assert source.link_target == linked_rel(source.path)
            path = root / source.link_target
        assert stat.S_ISREG(path.lstat().st_mode)
        assert path.resolve().is_relative_to(root)
        assert OUTSIDE_MARK not in source.content
        assert source.applicable_to == [tree.canonical_target]
    for slots_at_level in rule_slots.values():
        assert slots_at_level == list(range(10, 10 + len(slots_at_level)))
    assert snapshot.target_path == tree.canonical_target
    assert snapshot.fingerprint == snapshot_fingerprint(snapshot.to_json())


def check_against_model(snapshot: Snapshot, expectation: Expectation) -> None:
    actual = [
        (s.path, s.kind, s.scope, s.depth, s.precedence, s.content, s.bytes)
        for s in snapshot.sources
    ]
    assert actual == expectation.sources
    assert not any(source.redacted for source in snapshot.sources)
    ignored = {(entry.path, entry.reason, entry.superseded_by) for entry in snapshot.ignored}
    assert ignored == expectation.ignored
    for entry in snapshot.ignored:
        if entry.reason == "ignore_file":
            match = expectation.rules.match(entry.path)
            assert match is not None
            assert (entry.line, entry.pattern) == (match.line, match.pattern)
        else:
            assert entry.line is None
            assert entry.pattern is None
    # Conflicts: one per adjacent pair of sources with the same role.
    last_by_role: dict[str, str] = {}
    conflicts: set[tuple[str, str, str]] = set()
    for path, kind, scope, *_ in expectation.sources:
        if kind == "prayu_rule":
            role = (
                "prayu_rule:"
                + path.removeprefix("" if scope == "." else scope + "/")[len(".prayu/rules/") :]
            )
        else:
            role = "agents" if kind == "agents_override" else kind
        if role in last_by_role:
            conflicts.add((role, last_by_role[role], path))
        last_by_role[role] = path
    assert {
        (c.role, c.lower_precedence_path, c.higher_precedence_path) for c in snapshot.conflicts
    } == conflicts
    assert len(snapshot.conflicts) == len(conflicts)


def flip_letter(body: bytes) -> bytes:
    """The same bytes with the first ASCII lowercase letter changed: same length, new text."""
    for index, byte in enumerate(body):
        if 0x61 <= byte <= 0x7A:
            replacement = 0x61 if byte != 0x61 else 0x62
            return body[:index] + bytes([replacement]) + body[index + 1 :]
    raise AssertionError(f"no letter in {body!r}")


# -- the properties ---------------------------------------------------------------------------


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=trees(), data=st.data())
def test_discovery_on_random_trees(tree: Tree, data: st.DataObject) -> None:
    """(a) deterministic across readers; (b) ordinals and precedence; (c) sources only from the
    target's ancestor chain, inside the workspace; (d) only typed errors; (e) a failure exactly
    when the tree holds a reason for it, naming it; (f) fingerprint consistent and moved by any
    delivered content change. Plus: sources, ignored and conflicts equal the model's."""
    with tempfile.TemporaryDirectory(dir=TREE_BASE) as tmp:
        root = build(Path(tmp).resolve(), tree)
        expectation = expect(tree)
        outcome = attempt(root, tree.target, FileReader())

        # (a) deterministic: fresh readers, a warm reader, and a warm reader whose clock makes
        # every entry cacheable give the same answer (loaded_at aside).
        again = attempt(root, tree.target, FileReader())
        warm = FileReader()
        attempt(root, tree.target, warm)
        cached = FileReader(clock_ns=future_clock())
        attempt(root, tree.target, cached)
        for other in (again, attempt(root, tree.target, warm), attempt(root, tree.target, cached)):
            assert comparable(other) == comparable(outcome)

        event("clean tree" if tree.clean else "tree with bad ingredients")
        if isinstance(outcome, RutterError):
            event(f"error: {outcome.code}")
        else:
            sources = min(len(outcome.sources), 10)
            event(f"snapshot: {sources}+ sources, {len(outcome.ignored)} ignored")
            if any(source.link_target for source in outcome.sources):
                event("snapshot with a followed link")

        # (e) it fails exactly when the tree holds a reason to, with that reason.
        if tree.clean:
            assert not expectation.errors, f"model bug: clean tree expected {expectation.errors}"
        if expectation.errors:
            assert isinstance(outcome, RutterError), (
                f"expected one of {sorted(expectation.errors)}, got a snapshot"
            )
            assert (outcome.code, outcome.path) in expectation.errors, outcome
            return
        assert not isinstance(outcome, RutterError), f"unexpected {outcome!r}"

        # (b), (c), fingerprint consistency; and the model's sources, ignored and conflicts.
        check_structure(outcome, tree, root)
        check_against_model(outcome, expectation)

        # (f) changing any delivered source's content moves the fingerprint.
        if not outcome.sources:
            return
        index = data.draw(st.integers(0, len(outcome.sources) - 1), label="mutated source")
        changed = outcome.sources[index]
        path = root / changed.path
        path.write_bytes(flip_letter(path.read_bytes()))
        after = attempt(root, tree.target, FileReader())
        assert isinstance(after, Snapshot), after
        assert after.fingerprint != outcome.fingerprint
        assert after.fingerprint == snapshot_fingerprint(after.to_json())
        assert after.sources[index].content != changed.content
        assert after.sources[index].content_sha256 != changed.content_sha256
        unchanged = [s.content for i, s in enumerate(after.sources) if i != index]
        assert unchanged == [s.content for i, s in enumerate(outcome.sources) if i != index]
        # A warm reader with the real clock sees the change too (the file is racily new).
        assert comparable(attempt(root, tree.target, warm)) == comparable(after)


@st.composite
def small_limits(draw: st.DrawFn) -> Limits:
    return Limits(
        max_files=draw(st.integers(1, 24)),
        max_file_bytes=draw(st.integers(4, 120)),
        max_total_bytes=draw(st.integers(4, 800)),
        max_depth=draw(st.integers(1, 6)),
        max_ignore_bytes=draw(st.integers(8, 200)),
        max_ignore_patterns=draw(st.integers(1, 8)),
    )


def bound_violations(tree: Tree, expectation: Expectation, limits: Limits) -> set[str]:
    """The bound codes a clean tree must fail with under `limits` (empty: it must succeed)."""
    codes: set[str] = set()
    if tree.ignore is not None:
        patterns = [line for line in tree.ignore if line.strip() and not line.startswith("#")]
        if (
            len(tree.ignore_bytes) > limits.max_ignore_bytes
            or len(patterns) > limits.max_ignore_patterns
        ):
            codes.add("invalid_ignore")
    if tree.canonical_target != "." and tree.canonical_target.count("/") + 1 > limits.max_depth:
        codes.add("too_deep")
    if expectation.rules_nesting > limits.max_depth:
        codes.add("too_deep")
    if any(size > limits.max_file_bytes for size in expectation.read_sizes.values()):
        codes.add("too_large")
    if len(expectation.sources) > limits.max_files:
        codes.add("too_many_files")
    if sum(source[-1] for source in expectation.sources) > limits.max_total_bytes:
        codes.add("total_too_large")
    return codes


@settings(
    max_examples=70,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tree=trees(allow_bad=False), limits=small_limits())
def test_bounds_fail_exactly_when_exceeded(tree: Tree, limits: Limits) -> None:
    """(e) for bounds: a clean tree fails only with a bound it exceeds, and always if it does."""
    assert tree.clean
    with tempfile.TemporaryDirectory(dir=TREE_BASE) as tmp:
        root = build(Path(tmp).resolve(), tree)
        expectation = expect(tree)
        assert not expectation.errors
        violated = bound_violations(tree, expectation, limits)
        outcome = attempt(root, tree.target, FileReader(), limits)
        event(f"violated: {sorted(violated)}")
        if violated:
            assert isinstance(outcome, RutterError), f"expected one of {violated}, got a snapshot"
            assert outcome.code in violated, outcome
        else:
            assert not isinstance(outcome, RutterError), f"unexpected {outcome!r}"
            assert outcome.limits == limits
            check_against_model(outcome, expectation)


RULE_PARTS = ("a", "a-b", "a.b", "A", "_x", "\u00e9", "\u00c4", "z", "sub", "10", "9")


@st.composite
def rule_sets(draw: st.DrawFn) -> list[str]:
    return draw(
        st.lists(
            st.builds(
                lambda dirs, name, ext: "/".join([".prayu/rules", *dirs, name + ext]),
                st.lists(st.sampled_from(RULE_PARTS), max_size=2),
                st.sampled_from(RULE_PARTS),
                st.sampled_from([".md", ".MD", ".mD"]),
            ),
            min_size=1,
            max_size=8,
            unique=True,
        )
    )


@settings(max_examples=60, deadline=None)
@given(rels=rule_sets(), level=st.sampled_from(["", "a", "a/sub"]))
def test_rules_are_ordered_by_path_bytes(rels: list[str], level: str) -> None:
    """Slots 10+i follow the byte order of the full path, not the directory walk or name order
    (e.g. `a-b.md` < `a.md` < `a/z.md`, upper case before lower, non-ASCII last)."""
    with tempfile.TemporaryDirectory(dir=TREE_BASE) as tmp:
        root = Path(tmp).resolve()
        for rel in rels:
            path = root / level / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"rule {rel}\n", encoding="utf-8")
        outcome = attempt(root, join(level, "x.go"), FileReader())
        assert isinstance(outcome, Snapshot), outcome
        expected = sorted((join(level, rel) for rel in rels), key=str.encode)
        assert [source.path for source in outcome.sources] == expected
        depth = level.count("/") + 1 if level else 0
        assert [source.precedence for source in outcome.sources] == [
            100 * depth + 10 + index for index in range(len(rels))
        ]
        assert [source.content for source in outcome.sources] == [
            f"rule {rel.removeprefix(level + '/') if level else rel}\n" for rel in expected
        ]


# An OS refusal (permissions, I/O) is a typed `unreadable` error naming the path, never a raw
# OSError. Simulated with a patched call because the suite may run as root, which ignores
# permissions.
@pytest.mark.parametrize("call", ["open", "scandir", "lstat"])
def test_unreadable_paths_fail_with_a_typed_error(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    root = workspace_root
    (root / ".prayu/rules").mkdir(parents=True)
    (root / ".prayu/rules/r.md").write_text("rule\n", encoding="utf-8")
    (root / AGENTS).write_text("agents\n", encoding="utf-8")
    victim = {
        "open": root / AGENTS,  # a source that cannot be opened
        "scandir": root / ".prayu/rules",  # a rules directory that cannot be listed
        "lstat": root / AGENTS,  # a source whose metadata cannot be read
    }[call]
    real = getattr(os, call)

    def denied(path: object, *args: object, **kwargs: object) -> object:
        if isinstance(path, str | os.PathLike) and os.fspath(path) == str(victim):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, call, denied)
    outcome = attempt(root, "x.go", FileReader())
    assert isinstance(outcome, RutterError)
    assert outcome.code == "unreadable"
    assert outcome.path == victim.relative_to(root).as_posix()


def test_unsearchable_directory_fails_closed(
    workspace_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory we may not search must not look empty: access() would call every name in it
    absent, so discovery falls back to lstat there, which reports the refusal."""
    root = workspace_root
    (root / "sub").mkdir()
    (root / "sub/AGENTS.md").write_text("hidden\n", encoding="utf-8")
    real_access, real_lstat = os.access, os.lstat
    locked = str(root / "sub")

    def access(path: str, mode: int, **kwargs: bool) -> bool:
        if os.fspath(path) == locked and mode == os.X_OK:
            return False
        if os.fspath(path).startswith(locked + os.sep):
            return False
        return real_access(path, mode, **kwargs)

    def lstat(path: str, **kwargs: int | None) -> os.stat_result:
        if os.fspath(path).startswith(locked + os.sep):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_lstat(path, **kwargs)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "lstat", lstat)
    outcome = attempt(root, "sub/x.go", FileReader())
    assert isinstance(outcome, RutterError)
    assert outcome.code == "unreadable"
    assert outcome.path is not None
    assert outcome.path.startswith("sub/")
