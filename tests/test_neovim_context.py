"""`:RutterContext` in real headless Neovim 0.11 against the real server (issue 29): a run whose
pinned instructions and pins need more than the default budget gets the `context_overflow` error
with its figures, and the fixes through `vim.ui.select`: "Raise budget…" assembles again with
the budget typed, "Remove pins…" removes the chosen required pin and assembles again, offering
the fixes again while the context still overflows."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import write_tree
from tests.neovim_client import run_nvim
from tests.testing import Cli


def _rules(size: int) -> str:
    lines = ["# Rules", ""]
    rule = 1
    while len("\n".join(lines)) < size:
        lines.append(f"- Rule {rule}: validate every field of record batch {rule} before storing.")
        rule += 1
    return "\n".join(lines) + "\n"


def test_overflow_offers_the_fixes_and_assembles_again(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    # About 12,000 tokens of instructions and four pins of about 1,960: 19,800 in all; without
    # one pin still more than the default budget (16,384), without two less.
    write_tree(root, {"AGENTS.md": _rules(48_000), "svc/main.go": "package main\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    cli = Cli(tmp_path / "rutter-home", root)
    cli.json("workspace", "register", "proj", str(root))
    run = cli.json("run", "create", "--workspace", "proj", "--goal", "g")
    pins = [
        cli.json(
            "context", "pin", "add", run["thread_id"],
            "--text", f"{letter}: " + "keep the batch order stable. " * 270,
        )["pin_id"]
        for letter in "abcd"
    ]  # fmt: skip

    results = run_nvim(tmp_path, "context_overflow", root)

    error = results["first_error"]
    assert error["code"] == "context_overflow"
    assert error["details"]["budget"] == 16384
    required = error["details"]["required"]
    assert [(source["kind"], source["id"]) for source in required] == [
        ("instruction", "AGENTS.md"), *(("pin", pin) for pin in pins),
    ]  # fmt: skip
    shown = results["first_shown"]
    assert shown.startswith(
        f"rutter: the required context of run {run['run_id']} needs {error['details']['needed']} "
        "tokens and the budget is 16384; nothing is delivered"
    )
    assert f"pin {pins[0]} ({required[1]['tokens']} tokens)" in shown
    assert shown.endswith("Fix: remove pins, raise the budget, choose a model with a larger window")
    # Raise budget…: the tokens needed offered, 60000 typed, assembled with it.
    assert results["prompts"][0] == {
        "prompt": f"Budget of run {run['run_id']} in tokens (needs {error['details']['needed']}, "
        "was 16384): ",
        "default": str(error["details"]["needed"]),
    }
    assert results["raised_budget"] == 60000
    assert results["raised_name"] == f"rutter://context/{run['run_id']}"
    assert results["raised_view"][1].startswith(
        f"Budget: {error['details']['needed']} of 60000 tokens used (required context "
        f"{error['details']['needed']}; memory sub-budget "
    )
    # Remove pins…: the fixes, then the required pins; twice, then it fits the default budget.
    asked = results["asked"]
    fixes = {"prompt": f"rutter: fix the overflow of run {run['run_id']}: ",
             "items": ["Remove pins…", "Raise budget…"]}  # fmt: skip
    assert asked[0] == fixes
    assert asked[1] == fixes
    assert asked[2]["prompt"] == "rutter: remove which pin? "
    assert [item.split(" · ")[0] for item in asked[2]["items"]] == pins
    assert asked[2]["items"][0] == (
        f"{pins[0]} · {required[1]['tokens']} tokens · "
        "a: keep the batch order stable. keep the batch order stable."
    )
    assert asked[3] == fixes
    assert [item.split(" · ")[0] for item in asked[4]["items"]] == pins[1:]
    assert len(asked) == 5
    assert results["removed_errors"] == 2
    assert results["fitted_budget"] == 16384
    left = cli.json("context", "pin", "list", run["thread_id"])["pins"]
    assert [pin["pin_id"] for pin in left] == pins[2:]
