"""Readable output (issue 11 item 6), from the CLI as a real process: on a terminal (a real
pseudo-terminal of 80 and 100 columns) nothing is broken in the middle of a word and no line is
wider than the terminal unless it is one word; piped, plain text that depends on no width;
layering worded as layering; flags' help without `<bool>`."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from typing import Any

import pytest

from tests.testing import EXAMPLE, Cli

TARGET = "services/api/internal/parser/x.go"
BOXES = set("│┃━─┏┓└┘")


def on_terminal(cli: Cli, columns: int, *args: str) -> str:
    """Run `rutter ARGS` with its stdout on a pseudo-terminal `columns` wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
    env.update(RUTTER_HOME=str(cli.home), COLUMNS=str(columns), TERM="xterm", NO_COLOR="1")
    chunks = []
    with subprocess.Popen(
        [sys.executable, "-m", "rutter", *args], stdout=slave, stderr=subprocess.PIPE,
        cwd=cli.cwd, env=env,
    ) as process:  # fmt: skip
        os.close(slave)
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    # Bold (which NO_COLOR keeps) is not text.
    for code in ("\x1b[1m", "\x1b[0m", "\x1b[22m"):
        text = text.replace(code, "")
    assert "\x1b" not in text
    return text


def words(text: str) -> list[str]:
    for box in BOXES:
        text = text.replace(box, " ")
    return text.split()


def assert_fits(text: str, columns: int, whole: list[str]) -> None:
    """No line wider than `columns` unless it holds one word; every one of `whole` (IDs, paths,
    the words of prose) appears as a whole word somewhere."""
    for line in text.splitlines():
        if len(line) > columns:
            assert len(line.split()) == 1, f"wider than {columns}: {line!r}"
    found = set(words(text))
    broken = [word for word in whole if word not in found]
    assert broken == [], f"broken in the middle: {broken}"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cli, dict[str, Any], str]:
    base = tmp_path_factory.mktemp("output")
    cli = Cli(base / "home", base)
    cli.json("workspace", "register", "demo", str(EXAMPLE))
    cli.json("workspace", "register", "a-workspace-with-a-long-id", str(EXAMPLE / "services"))
    snapshot = cli.json("context", "instructions", "--workspace", "demo", "--target", TARGET)
    run = cli.json("run", "create", "--workspace", "demo", "--target", TARGET, "--goal",
                   "teach the parser the new grammar and keep the old one readable")  # fmt: skip
    return cli, snapshot, run["run_id"]


@pytest.mark.parametrize("columns", [80, 100])
def test_instructions_fit_the_terminal(
    example: tuple[Cli, dict[str, Any], str], columns: int
) -> None:
    cli, snapshot, _ = example
    out = on_terminal(cli, columns, "context", "instructions", "--workspace", "demo",
                      "--target", TARGET)  # fmt: skip
    whole = [source["path"] for source in snapshot["sources"]]
    whole += [word for source in snapshot["sources"] for word in source["why_effective"].split()]
    assert_fits(out, columns, whole)
    assert "Layering: 3 pairs of files apply together; where they differ, the nearer" in (
        " ".join(out.split())
    )
    assert "Conflicts" not in out


@pytest.mark.parametrize("columns", [80, 100])
def test_tables_fit_the_terminal(example: tuple[Cli, dict[str, Any], str], columns: int) -> None:
    cli, _, run_id = example
    listed = on_terminal(cli, columns, "workspace", "list")
    assert_fits(listed, columns, [str(EXAMPLE), str(EXAMPLE / "services"),
                                  "a-workspace-with-a-long-id"])  # fmt: skip
    runs = on_terminal(cli, columns, "run", "list")
    # The list shortens a long goal between words (`run show` has all of it).
    assert_fits(runs, columns, [run_id, TARGET, "teach", "grammar", "old", "…"])
    shown = on_terminal(cli, columns, "run", "show", run_id)
    assert_fits(shown, columns, [run_id, TARGET, "teach", "grammar", "readable"])


def test_a_table_that_fits_keeps_its_boxes(example: tuple[Cli, dict[str, Any], str]) -> None:
    cli, _, _ = example
    wide = on_terminal(cli, 160, "workspace", "list")
    assert wide.splitlines()[1].split("┃")[1].strip() == "workspace"
    narrow = on_terminal(cli, 80, "workspace", "list")
    # 80 columns cannot hold the ID, the whole root and the time side by side: one block each.
    assert not BOXES & set(narrow)
    assert f"root        {EXAMPLE}" in narrow


def test_piped_output_depends_on_no_width(example: tuple[Cli, dict[str, Any], str]) -> None:
    cli, snapshot, run_id = example
    for args in (
        ("context", "instructions", "--workspace", "demo", "--target", TARGET),
        ("workspace", "list"),
        ("run", "list"),
        ("run", "show", run_id),
    ):
        outputs = set()
        for columns in ("40", "80", "300"):
            env = {k: v for k, v in os.environ.items() if not k.startswith("RUTTER_")}
            env.update(RUTTER_HOME=str(cli.home), COLUMNS=columns)
            command = [sys.executable, "-m", "rutter", *args]
            done = subprocess.run(command, cwd=cli.cwd, env=env, capture_output=True,
                                  text=True, timeout=120, check=True)  # fmt: skip
            outputs.add(done.stdout)
        assert len(outputs) == 1, args
        out = outputs.pop()
        assert not BOXES & set(out), args
        assert all(line == line.rstrip() for line in out.splitlines()), args
    # Prose is never wrapped: each source's reason is one line.
    piped = cli("context", "instructions", "--workspace", "demo", "--target", TARGET).stdout
    lines = piped.splitlines()
    for source in snapshot["sources"]:
        assert f"    {source['why_effective']}" in lines
    listing = cli("workspace", "list").stdout.splitlines()
    assert listing[0].split() == ["workspace", "root", "project", "machine", "registered"]


def test_flags_have_no_type_in_help(example: tuple[Cli, dict[str, Any], str]) -> None:
    cli, _, _ = example
    for args in (("workspace", "list"), ("workspace", "remove"), ("context", "instructions"),
                 ("session", "message", "add"), ()):  # fmt: skip
        shown = cli(*args, "--help")
        assert shown.returncode == 0, shown.stderr
        assert "<bool>" not in shown.stdout
    help_text = cli("context", "instructions", "--help").stdout
    assert "--json " in help_text
    assert "<str>" in help_text  # options with values still say what they take


def test_json_is_unchanged_by_the_terminal(example: tuple[Cli, dict[str, Any], str]) -> None:
    cli, snapshot, _ = example
    out = on_terminal(cli, 80, "context", "instructions", "--workspace", "demo", "--target",
                      TARGET, "--json")  # fmt: skip
    body = json.loads(out)
    body.pop("loaded_at", None)
    for source in body["sources"]:
        source.pop("loaded_at", None)
    expected = dict(snapshot)
    expected.pop("loaded_at", None)
    expected["sources"] = [{k: v for k, v in s.items() if k != "loaded_at"}
                           for s in snapshot["sources"]]  # fmt: skip
    assert body == expected
