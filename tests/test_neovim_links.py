"""The Neovim float on links inside the workspace (docs/reference/discovery.md), in real headless
Neovim against the real server: a linked source shows where it leads, an alias is listed under
Ignored with the source it repeats."""

from __future__ import annotations

from pathlib import Path

from tests.neovim_client import TARGET, core_snapshot, rows, run_nvim, ws

__all__ = ["ws"]  # the fixture, shared with test_neovim


def test_float_shows_link_target_and_alias(tmp_path: Path, ws: Path) -> None:
    parser = ws / "services/api/internal/parser"
    (parser / "NOTES.md").write_text("parser notes\n", encoding="utf-8")
    (parser / "CLAUDE.md").symlink_to("NOTES.md")
    (ws / "services/api/CLAUDE.md").symlink_to("AGENTS.override.md")
    snapshot = core_snapshot(tmp_path, ws, TARGET)
    results = run_nvim(tmp_path, "links", ws)
    lines: list[str] = results["float"]["lines"]
    [row] = [line for line in lines if line.endswith("services/api/internal/parser/CLAUDE.md  → "
             "services/api/internal/parser/NOTES.md")]  # fmt: skip
    assert row.split()[2] == "claude"
    alias = (
        "  services/api/CLAUDE.md — alias of services/api/AGENTS.override.md (a link to it; "
        "not delivered twice)"
    )
    assert alias in lines
    assert rows(results["float"])[lines.index(alias) + 1] == "services/api/CLAUDE.md"
    assert f"Fingerprint {snapshot['fingerprint']}" in lines
    linked = [s for s in snapshot["sources"] if s.get("link_target")]
    assert [s["path"] for s in linked] == ["services/api/internal/parser/CLAUDE.md"]
