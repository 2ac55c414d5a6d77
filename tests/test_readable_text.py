"""Text a person reads before it takes effect (pins and pin proposals, checkpoint titles and
summaries, run goals, memory titles and content) refuses bidirectional controls and invisible
characters everywhere the same: one rule (`rutter_core.kernel.text`), one error code
(`control_character`) naming the field and the code point, never the text. Through the app
facade on a real store, through `rutter mcp` as an agent calls it, and through the CLI; and the
CLI prints no such character raw, rows stored before the rule included."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from rich.table import Table

from rutter_cli.console import FittingConsole, PlainConsole
from rutter_core.app.branches import ForkParams
from rutter_core.app.continuity import CheckpointParams
from rutter_core.app.facade import Rutter
from rutter_core.app.memory import CreateMemoryParams, EditMemoryParams
from rutter_core.app.pins import (
    AddPinParams,
    AnswerProposalParams,
    EditPinParams,
    ListPinsParams,
    ListProposalsParams,
    ProposePinParams,
)
from rutter_core.app.runs import CreateRunParams, ListRunsParams
from rutter_core.app.workspaces import RegisterWorkspaceParams
from rutter_core.kernel.errors import RejectedError
from rutter_core.kernel.text import first_unreadable_char, require_readable, visible
from rutter_core.store import Store, open_store
from tests.conftest import write_tree
from tests.testing import Cli, sqlite_file

SENTINEL = "sentinel-readable-7f3a"

# What the attack got through (U+202E, U+2066/U+2069, U+200B), and one of each other kind.
REFUSED = {
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
    "\u200e": "LEFT-TO-RIGHT MARK",
    "\u200f": "RIGHT-TO-LEFT MARK",
    "\u061c": "ARABIC LETTER MARK",
    "\u200b": "ZERO WIDTH SPACE",
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    "\u2060": "WORD JOINER",
    "\u2062": "INVISIBLE TIMES",
    "\u2064": "INVISIBLE PLUS",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
    "\u00ad": "SOFT HYPHEN",
    "\u180e": "MONGOLIAN VOWEL SEPARATOR",
    "\u034f": "COMBINING GRAPHEME JOINER",
    "\u3164": "HANGUL FILLER",
    "\ufe00": "VARIATION SELECTOR-1",
    "\U000e0041": "TAG LATIN CAPITAL LETTER A",  # hidden ASCII ("ASCII smuggling")
    "\U000e0001": "LANGUAGE TAG",
    "\U000e0100": "VARIATION SELECTOR-17",
    "\u2028": "LINE SEPARATOR",
    "\u2029": "PARAGRAPH SEPARATOR",
    "\x1b": "",
    "\x85": "",
}

ACCEPTED = [
    "Never push to main.",
    "é ü 中文 ∑ — and a non-breaking\u00a0space",
    "עברית and العربية: right-to-left letters themselves are text",
    "an accent written as a combining mark: e\u0301",
    "emoji with their presentation selector: \u26a0\ufe0f careful, \u2764\ufe0f, \u263a\ufe0e",
    "🎉 🚀 👩 💻",
    "two lines\n\tand a tab",
]


def test_the_rule_refuses_each_character_and_names_it() -> None:
    for char, name in REFUSED.items():
        text = f"{SENTINEL} {char} after"
        assert first_unreadable_char(text, allowed="\n\t") == (len(SENTINEL) + 1, char), name
        with pytest.raises(RejectedError) as raised:
            require_readable("title", text, allowed="\t")
        error = raised.value
        assert error.code == "control_character"
        assert error.details == {
            "field": "title", "codepoint": f"U+{ord(char):04X}", "offset": len(SENTINEL) + 1,
        }  # fmt: skip
        assert name in error.message
        assert SENTINEL not in json.dumps(error.to_json())
        assert visible(text) == f"{SENTINEL} <U+{ord(char):04X}> after"


def test_every_format_character_of_unicode_is_refused() -> None:
    """Category Cf as this Python knows it (a newer Unicode adds some: the rule lists them)."""
    format_chars = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf"]
    assert len(format_chars) > 150
    missed = [f"U+{ord(c):04X}" for c in format_chars if not first_unreadable_char(c, allowed="")]
    assert missed == []
    assert all(first_unreadable_char(f"a{c}", allowed="") == (1, c) for c in format_chars)


@pytest.mark.parametrize("text", ACCEPTED)
def test_what_people_write_is_accepted(text: str) -> None:
    assert first_unreadable_char(text, allowed="\n\t") is None
    assert visible(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "\ufe0f at the start",
        "after a space \ufe0f",
        "doubled \u26a0\ufe0f\ufe0f",
        "\u26a0\ufe0e\ufe0f",
    ],
)
def test_a_presentation_selector_that_shows_nothing_is_refused(text: str) -> None:
    found = first_unreadable_char(text, allowed="\n\t")
    assert found is not None
    assert found[1] in "\ufe0e\ufe0f"


def test_newlines_and_tabs_only_where_a_field_allows_them() -> None:
    assert first_unreadable_char("a\nb", allowed="\t") == (1, "\n")
    assert first_unreadable_char("a\tb", allowed="") == (1, "\t")
    assert first_unreadable_char("a\rb", allowed="\n\t") == (1, "\r")


# -- every field, through the app facade on a real store ------------------------------------


@pytest.fixture
def rutter(store: Store, workspace_root: Path) -> Rutter:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    facade = Rutter(store)
    facade.workspaces.register(
        RegisterWorkspaceParams(workspace_id="demo", root=str(workspace_root), cwd="/")
    )
    return facade


def _counts(store: Store) -> dict[str, int]:
    conn = sqlite3.connect(str(sqlite_file(store)))
    try:
        tables = ["pins", "pin_proposals", "continuity_nodes", "runs", "missions", "memories"]
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in tables}
    finally:
        conn.close()


def _writes(rutter: Rutter) -> dict[str, Callable[[str], object]]:
    """Each field a person reads before it takes effect, written with `text` in it."""
    run = rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    node = rutter.continuity.checkpoint(CheckpointParams(run_id=run.run_id, title="t"), actor="cli")
    pin = rutter.pins.add(AddPinParams(thread_id=run.thread_id, text="keep"), actor="cli")
    proposal = rutter.pins.propose(ProposePinParams(run_id=run.run_id, text="p"), actor="mcp")
    memory = rutter.memory.create(
        CreateMemoryParams(scope="user", title="m", content="c"), actor="cli"
    )
    return {
        "pin add": lambda text: rutter.pins.add(
            AddPinParams(thread_id=run.thread_id, text=text), actor="cli"
        ),
        "pin edit": lambda text: rutter.pins.edit(
            EditPinParams(pin_id=pin.pin_id, version=1, text=text), actor="cli"
        ),
        "pin proposal (an agent's)": lambda text: rutter.pins.propose(
            ProposePinParams(run_id=run.run_id, text=text), actor="mcp"
        ),
        "custom answer, pinned": lambda text: rutter.pins.answer(
            AnswerProposalParams(
                proposal_id=proposal.proposal_id, choice="custom", text=text, pin=True
            ),
            actor="cli",
        ),
        "checkpoint title (an agent's)": lambda text: rutter.continuity.checkpoint(
            CheckpointParams(run_id=run.run_id, title=text), actor="mcp"
        ),
        "checkpoint summary": lambda text: rutter.continuity.checkpoint(
            CheckpointParams(run_id=run.run_id, title="t", summary=text), actor="cli"
        ),
        "run goal": lambda text: rutter.runs.create(
            CreateRunParams(goal=text, workspace_id="demo"), actor="cli"
        ),
        "fork goal": lambda text: rutter.branches.fork(
            ForkParams(node_id=node.node_id, goal=text), actor="cli"
        ),
        "memory title": lambda text: rutter.memory.create(
            CreateMemoryParams(scope="user", title=text, content="c"), actor="cli"
        ),
        "memory content": lambda text: rutter.memory.create(
            CreateMemoryParams(scope="user", title="t", content=text), actor="cli"
        ),
        "memory title edit": lambda text: rutter.memory.edit(
            EditMemoryParams(id=memory.memory_id, version=1, title=text), actor="cli"
        ),
    }


def test_every_field_refuses_the_same_characters_with_one_code(
    rutter: Rutter, store: Store
) -> None:
    writes = _writes(rutter)
    before = _counts(store)
    for what, write in writes.items():
        for char in ("\u202e", "\u2066", "\u2069", "\u200b", "\U000e0041", "\ufeff"):
            with pytest.raises(RejectedError) as raised:
                write(f"{SENTINEL} a{char}b")
            error = raised.value
            assert error.code == "control_character", (what, error)
            assert error.details["codepoint"] == f"U+{ord(char):04X}", what
            assert error.details["offset"] == len(SENTINEL) + 2, what
            assert SENTINEL not in json.dumps(error.to_json()), what
    assert _counts(store) == before  # nothing written, not even a run's first rows
    for what, write in writes.items():
        if what not in ("pin edit", "custom answer, pinned", "memory title edit"):
            write("fine \u26a0\ufe0f text")  # the same fields take what people write


def test_a_token_split_by_an_invisible_character_is_refused_without_echo(
    rutter: Rutter,
) -> None:
    token = "ghp_" + "A1b2C3d4E5" * 2 + "\u200b" + "F6g7H8i9J0K1l2M3"
    with pytest.raises(RejectedError) as raised:
        rutter.memory.create(
            CreateMemoryParams(scope="user", title="t", content=f"push with {token}"), actor="cli"
        )
    assert raised.value.code == "control_character"
    assert "A1b2C3d4E5" not in json.dumps(raised.value.to_json())


def _store_legacy(store: Store, sql: str, *params: object) -> None:
    """Write as a store made before the rule did: straight to the table."""
    conn = sqlite3.connect(str(sqlite_file(store)))
    try:
        with conn:
            conn.execute(sql, params)
    finally:
        conn.close()


def test_a_legacy_proposal_is_not_pinned_as_shown_but_can_be_answered(
    rutter: Rutter, store: Store
) -> None:
    run = rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    first = rutter.pins.propose(ProposePinParams(run_id=run.run_id, text="one"), actor="mcp")
    second = rutter.pins.propose(ProposePinParams(run_id=run.run_id, text="two"), actor="mcp")
    for proposal in (first, second):
        _store_legacy(
            store,
            "UPDATE pin_proposals SET text = ? WHERE proposal_id = ?",
            f"{SENTINEL} run \u202etset\u202c now",
            proposal.proposal_id,
        )
    with pytest.raises(RejectedError) as raised:
        rutter.pins.answer(
            AnswerProposalParams(proposal_id=first.proposal_id, choice="pin"), actor="cli"
        )
    assert raised.value.code == "control_character"
    assert raised.value.hint is not None
    assert raised.value.hint.fix == "answer_custom"
    assert SENTINEL not in json.dumps(raised.value.to_json())
    assert rutter.pins.list(ListPinsParams(thread_id=run.thread_id)).pins == ()
    answered = rutter.pins.answer(
        AnswerProposalParams(
            proposal_id=first.proposal_id, choice="custom", text="run the tests now", pin=True
        ),
        actor="cli",
    )
    assert answered.pin is not None
    assert answered.pin.text == "run the tests now"
    discussed = rutter.pins.answer(
        AnswerProposalParams(proposal_id=second.proposal_id, choice="discuss"), actor="cli"
    )
    assert discussed.pin is None
    pending = rutter.pins.proposals(ListProposalsParams(all=True)).proposals
    assert {p.status for p in pending} == {"answered"}


# -- through `rutter mcp`, as an agent calls it ----------------------------------------------


@pytest.fixture
def cli(tmp_path: Path, workspace_root: Path) -> Cli:
    write_tree(workspace_root, {"AGENTS.md": "rules\n"})
    cli = Cli(tmp_path / "home", workspace_root)
    cli.json("workspace", "register", "demo", str(workspace_root))
    return cli


async def _mcp_failure(cli: Cli, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rutter", "mcp"],
        env={"RUTTER_HOME": str(cli.home)},
        cwd=cli.cwd,
    )
    async with Client(params, read_timeout_seconds=60) as client:
        result = await client.call_tool(name, arguments)
    assert result.is_error, result
    document = result.structured_content
    assert isinstance(document, dict)
    assert SENTINEL not in json.dumps(document)
    error: dict[str, Any] = document["error"]
    return error


@pytest.mark.asyncio
async def test_mcp_refuses_a_proposal_and_a_checkpoint_title_an_agent_sends(cli: Cli) -> None:
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    cases = [
        ("context_pin_propose", {"run_id": run["run_id"], "text": f"{SENTINEL} ok\u202e"}),
        ("context_pin_propose", {"run_id": run["run_id"], "text": f"{SENTINEL} \u2066x\u2069"}),
        ("context_pin_propose", {"run_id": run["run_id"], "text": f"{SENTINEL} z\u200bw"}),
        ("checkpoint_create", {"run_id": run["run_id"], "title": f"{SENTINEL} \u202edone"}),
        ("checkpoint_create",
         {"run_id": run["run_id"], "title": "t", "summary": f"{SENTINEL} \U000e0041"}),
    ]  # fmt: skip
    for name, arguments in cases:
        error = await _mcp_failure(cli, name, arguments)
        assert error["code"] == "control_character", (name, error)
        assert error["details"]["field"] in ("text", "title", "summary")
    assert cli.json("context", "pin", "proposals", "--all")["proposals"] == []
    tree = cli.json("session", "tree", run["run_id"])
    assert "checkpoint" not in json.dumps(tree)


# -- through the CLI ---------------------------------------------------------------------------


def test_the_cli_refuses_the_same_and_says_which_field(cli: Cli) -> None:
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    cases = [
        ["run", "create", "--workspace", "demo", "--goal", f"{SENTINEL} fix \u202eit"],
        ["session", "checkpoint", run["run_id"], "--title", f"{SENTINEL} \u200bdone"],
        ["context", "pin", "add", run["thread_id"], "--text", f"{SENTINEL} \u2066x\u2069"],
        ["context", "memory", "create", "--scope", "user", "--title", f"{SENTINEL}\u00ad",
         "--content", "c"],
    ]  # fmt: skip
    for args in cases:
        result = cli(*args, "--json")
        assert result.returncode == 3, (args, result.stdout, result.stderr)
        assert json.loads(result.stdout)["error"]["code"] == "control_character"
        assert SENTINEL not in result.stdout + result.stderr


def test_the_cli_prints_no_such_character_raw_from_rows_stored_before_the_rule(
    cli: Cli,
) -> None:
    run = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    cli.json("context", "pin", "add", run["thread_id"], "--text", "keep")
    cli.json("context", "memory", "create", "--scope", "user", "--title", "m", "--content", "c")
    with open_store(f"sqlite:///{cli.home / 'rutter.db'}") as store:
        Rutter(store).pins.propose(ProposePinParams(run_id=run["run_id"], text="p"), actor="mcp")
        legacy = "run \u202etset\u202c \u2066all\u2069 z\u200bw \U000e0041 \ufeff"
        for sql in (
            "UPDATE pin_proposals SET text = ?",
            "UPDATE pins SET text = ?",
            "UPDATE missions SET goal = ?",
            "UPDATE memories SET title = ?",
        ):
            _store_legacy(store, sql, legacy)
    # A message keeps what was said (not text that takes effect): stored as sent, shown escaped.
    cli.json("session", "message", "add", run["thread_id"], "--role", "user", "--text", legacy)
    shown = "run <U+202E>tset<U+202C> <U+2066>all<U+2069> z<U+200B>w <U+E0041> <U+FEFF>"
    for args in (
        ["session", "messages", run["thread_id"]],
        ["context", "pin", "proposals"],
        ["context", "pin", "list", run["thread_id"]],
        ["run", "list"],
        ["run", "show", run["run_id"]],
        ["context", "memory", "list", "--scope", "user"],
    ):
        result = cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        assert shown in result.stdout, (args, result.stdout)
        assert first_unreadable_char(result.stdout, allowed="\n") is None, args


def test_documents_carry_legacy_rows_as_stored(rutter: Rutter, store: Store) -> None:
    """Only output for people escapes them: a document (JSON) holds the stored text as it is."""
    rutter.runs.create(CreateRunParams(goal="g", workspace_id="demo"), actor="cli")
    _store_legacy(store, "UPDATE missions SET goal = ?", "a\u202eb")
    [listed] = rutter.runs.list(ListRunsParams()).runs
    assert listed.goal == "a\u202eb"


@pytest.mark.parametrize("console_class", [PlainConsole, FittingConsole])
def test_the_console_escapes_every_string_it_prints(
    console_class: type[PlainConsole] | type[FittingConsole],
) -> None:
    """What every command prints to people goes through this console: sentences, `out` lines,
    table cells and headers, in a pipe and on a terminal too narrow for the table."""
    buffer = io.StringIO()
    console = console_class(file=buffer, width=40, highlight=False, force_terminal=False)
    console.print("said \u202eevil\u202c", highlight=False)
    console.out("out \u200bline")
    table = Table("text", "more")
    table.add_row("cell \u2066x\u2069 " + "long " * 12, "a\U000e0041b")
    console.print(table)
    printed = buffer.getvalue()
    for shown in ("said <U+202E>evil<U+202C>", "out <U+200B>line", "<U+2066>x<U+2069>",
                  "a<U+E0041>b"):  # fmt: skip
        assert shown in printed, printed
    assert first_unreadable_char(printed, allowed="\n") is None
