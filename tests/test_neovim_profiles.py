"""Agent-profile diagnostics in a real headless Neovim (issue 20): the Codex cut on the line
where it falls, Claude Code's AGENTS.md note and a Copilot glob that matches no file, as
`vim.diagnostic` holds and shows them; no plugin code is involved beyond attaching."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from tests.neovim_client import run_nvim, ws  # noqa: F401  (the fixture)


def test_agent_diagnostics_in_neovim(tmp_path: Path, ws: Path) -> None:  # noqa: F811
    # 30,000 bytes at the root and above: the override of services/api is cut by Codex.
    (ws / "AGENTS.md").write_text(
        (ws / "AGENTS.md").read_text() + "x" * 30_000 + "\n", encoding="utf-8"
    )
    root_bytes = len((ws / "AGENTS.md").read_bytes())
    lines = "".join(f"api rule {n:06}\n" for n in range(1_000))  # 16 bytes a line
    (ws / "services/api/AGENTS.override.md").write_text(lines, encoding="utf-8")
    write_tree(
        ws, {".github/instructions/rust.instructions.md": '---\napplyTo: "**/*.rs"\n---\nr\n'}
    )

    found = run_nvim(tmp_path, "agents", ws)["diagnostics"]

    [cut] = [d for d in found["cut"] if d["code"] == "budget_cut"]
    remaining = 32 * 1024 - root_bytes
    assert cut["severity"] == "WARN"
    assert cut["source"] == "rutter"
    assert cut["lnum"] == remaining // 16  # 0-based: the line holding the first byte lost
    assert cut["message"].startswith(
        f"Codex will cut this file at line {remaining // 16 + 1} (byte {remaining})"
    )
    [claude] = [d for d in found["claude"] if d["code"] == "not_read"]
    assert claude["severity"] == "INFO"
    assert claude["message"].startswith("Claude Code will not read this AGENTS.md")
    [glob] = [d for d in found["glob"] if d["code"] == "glob_matches_nothing"]
    assert (glob["severity"], glob["lnum"]) == ("WARN", 1)
