"""`rutter context instructions --run RUN --diff` (issue 11 item 5): the drift as text to review
before confirming, end to end through the CLI as a real process."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rutter_core.app.runs import confirm_refresh_command
from rutter_core.runs.textdiff import unified
from tests.conftest import write_tree
from tests.testing import Cli

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home", tmp_path / "ws")


def test_unified_marks_a_last_line_without_newline() -> None:
    assert unified("a\nb", "a\nc", "x", "y") == (
        "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
        "\\ No newline at end of file\n"
    )
    assert unified("same\n", "same\n", "x", "y") == ""


def test_diff_shows_each_drifted_source_then_the_confirm_command(cli: Cli) -> None:
    root = cli.cwd
    write_tree(root, {"AGENTS.md": "# Root\n\n- use tabs\n- run make test\n",
                      "CLAUDE.md": "old claude\n", "src/AGENTS.md": "src rules\n"})  # fmt: skip
    cli.json("workspace", "register", "demo", str(root))
    run = cli.json("run", "create", "--goal", "g", "--target", "src/x.go")["run_id"]
    write_tree(root, {
        "AGENTS.md": f"# Root\n\n- use spaces\n- run make test\n- token: {TOKEN}\n",
        ".prayu/rules/style.md": "be nice\tplease",
        "src/AGENTS.md": "api \x1b[31mred [bold]x[/bold]\n",
    })  # fmt: skip
    (root / "CLAUDE.md").unlink()

    body = cli.json("context", "instructions", "--run", run, "--diff")
    assert list(body) == ["run_id", "revision", "pinned", "live", "stale", "diff", "diff_text"]
    pinned, live = body["diff"]["from_fingerprint"], body["diff"]["to_fingerprint"]
    texts = body["diff_text"]
    assert list(texts) == ["AGENTS.md", "src/AGENTS.md", ".prayu/rules/style.md", "CLAUDE.md"]
    assert texts["AGENTS.md"] == (
        "--- a/AGENTS.md\t(pinned revision 1)\n+++ b/AGENTS.md\t(live)\n@@ -1,4 +1,5 @@\n"
        " # Root\n \n-- use tabs\n+- use spaces\n - run make test\n"
        "+- token: [REDACTED:github_token]\n"
    )
    assert texts[".prayu/rules/style.md"] == (
        "--- /dev/null\n+++ b/.prayu/rules/style.md\t(live)\n@@ -0,0 +1 @@\n+be nice\tplease\n"
        "\\ No newline at end of file\n"
    )
    assert texts["CLAUDE.md"] == (
        "--- a/CLAUDE.md\t(pinned revision 1)\n+++ /dev/null\n@@ -1 +0,0 @@\n-old claude\n"
    )
    assert TOKEN not in str(body)
    # Without --diff the document is the one docs/reference/runs.md describes, unchanged.
    assert "diff_text" not in cli.json("context", "instructions", "--run", run)

    shown = cli("context", "instructions", "--run", run, "--diff")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert TOKEN not in out
    command = confirm_refresh_command(run, pinned, live)
    # Each diff verbatim (tabs kept), the escape character shown, not sent to the terminal.
    for path in ("AGENTS.md", ".prayu/rules/style.md", "CLAUDE.md"):
        assert "\n" + texts[path] in out
    assert "+api \\x1b[31mred [bold]x[/bold]\n" in out
    assert "\x1b" not in out
    assert out.index(texts["CLAUDE.md"]) < out.index("After reviewing the drift, run:")
    assert out.endswith(f"  {command}\n")

    confirmed = cli.json(*shlex.split(command)[1:])
    assert confirmed["refreshed"] is True
    after = cli.json("context", "instructions", "--run", run, "--diff")
    assert after["diff_text"] == {}
    assert after["stale"] is False


def test_diff_goes_with_a_run_alone(cli: Cli) -> None:
    write_tree(cli.cwd, {"AGENTS.md": "rules\n"})
    cli.json("workspace", "register", "demo", str(cli.cwd))
    run = cli.json("run", "create", "--goal", "g")["run_id"]
    for args in (("--target", "."), ("--run", run, "--confirm", "--expected-fingerprint", "x",
                                     "--expected-live-fingerprint", "y")):  # fmt: skip
        refused = cli("context", "instructions", *args, "--diff")
        assert refused.returncode == 2
        assert "--diff goes with --run RUN alone" in refused.stderr
