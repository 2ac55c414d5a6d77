"""The agents' configured names and limits (issue 20 follow-up): Codex's
`project_doc_max_bytes` and `project_doc_fallback_filenames` from `$CODEX_HOME/config.toml` and
a trusted project's `.codex/config.toml`, Gemini CLI's `context.fileName` from
`~/.gemini/settings.json` and the project's `.gemini/settings.json`; every configuration file
read fail-closed (a link, a large file, invalid TOML/JSON, a wrong value: a skip said in the
`why`, never its content). Real temp homes, in process and through the CLI process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.profiles.config import MAX_CONFIG_BYTES, AgentHomes
from rutter_core.profiles.engine import Evaluation, evaluate
from rutter_core.profiles.model import AgentName, load_profile
from tests.conftest import write_tree
from tests.testing import Cli

SECRET = "do-not-echo-7f3a"
BUDGET = 32 * 1024


def run(root: Path, agent: AgentName, target: str, homes: AgentHomes | None) -> Evaluation:
    return evaluate(load_profile(agent), str(root), target, FileReader(), homes=homes)


def sources(evaluation: Evaluation) -> list[str]:
    return [item.file.rel for item in evaluation.loaded]


def cut_at(evaluation: Evaluation, index: int = 0) -> int | None:
    cut = evaluation.loaded[index].truncation
    return None if cut is None else cut.byte


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "user-home"
    (path / ".codex").mkdir(parents=True)
    (path / ".gemini").mkdir()
    return path


def codex_config(home: Path, text: str) -> AgentHomes:
    (home / ".codex" / "config.toml").write_text(text)
    return AgentHomes(home=str(home))


# -- Codex ----------------------------------------------------------------------------------


def test_codex_fallback_names_and_budget_from_the_user_config(
    workspace_root: Path, home: Path
) -> None:
    write_tree(
        workspace_root,
        {"AGENTS.md": "root\n", "svc/CONTEXT.md": "c" * 200 + "\n", "svc/README.md": "r\n"},
    )
    homes = codex_config(
        home,
        'project_doc_max_bytes = 100\nproject_doc_fallback_filenames = ["CONTEXT.md", '
        '"README.md"]\n',
    )
    evaluation = run(workspace_root, "codex", "svc", homes)
    # One file per directory: the first configured fallback that exists, after AGENTS.md.
    assert sources(evaluation) == ["AGENTS.md", "svc/CONTEXT.md"]
    cut = evaluation.loaded[1].truncation
    assert cut is not None
    assert (cut.byte, cut.lost_bytes) == (95, 106)  # 100 - len("root\n")
    why = evaluation.loaded[1].why
    assert "fallback names CONTEXT.md, README.md from ~/.codex/config.toml" in why
    assert "project_doc_max_bytes = 100 from ~/.codex/config.toml" in why
    # Without homes the user's configuration is not read: the defaults.
    assert sources(run(workspace_root, "codex", "svc", None)) == ["AGENTS.md"]


def test_codex_home_wins_over_home(workspace_root: Path, home: Path, tmp_path: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 50 + "\n"})
    codex_config(home, "project_doc_max_bytes = 10\n")
    other = tmp_path / "codex-home"
    other.mkdir()
    (other / "config.toml").write_text("project_doc_max_bytes = 20\n")
    evaluation = run(workspace_root, "codex", ".", AgentHomes(str(home), str(other)))
    assert cut_at(evaluation) == 20
    assert "from $CODEX_HOME/config.toml" in evaluation.loaded[0].why


def test_codex_reads_project_config_layers_only_in_a_trusted_project(
    workspace_root: Path, home: Path
) -> None:
    write_tree(
        workspace_root,
        {"AGENTS.md": "a" * 50 + "\n", ".codex/config.toml": "project_doc_max_bytes = 30\n",
         "svc/.codex/config.toml": "project_doc_max_bytes = 40\n", "svc/x.go": ""},
    )  # fmt: skip
    homes = codex_config(home, "project_doc_max_bytes = 20\n")
    untrusted = run(workspace_root, "codex", "svc", homes)
    assert cut_at(untrusted) == 20
    assert (
        "Codex does not read .codex/config.toml, svc/.codex/config.toml: the project is not "
        "marked trusted" in untrusted.loaded[0].why
    )
    key = json.dumps(str(workspace_root))
    homes = codex_config(
        home, f'project_doc_max_bytes = 20\n[projects.{key}]\ntrust_level = "trusted"\n'
    )
    trusted = run(workspace_root, "codex", "svc", homes)  # the nearest layer wins
    assert cut_at(trusted) == 40
    assert "project_doc_max_bytes = 40 from svc/.codex/config.toml" in trusted.loaded[0].why
    assert cut_at(run(workspace_root, "codex", ".", homes)) == 30


def test_codex_budget_zero_turns_project_docs_off(workspace_root: Path, home: Path) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a\n"})
    homes = codex_config(home, "project_doc_max_bytes = 0\n")
    assert sources(run(workspace_root, "codex", ".", homes)) == []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f'project_doc_max_bytes = "{SECRET}\n', "it is not valid TOML"),
        (f'project_doc_max_bytes = "{SECRET}"\n', "its project_doc_max_bytes is not a whole"),
        ("project_doc_max_bytes = -1\n", "its project_doc_max_bytes is not a whole"),
        (f'project_doc_fallback_filenames = ["../{SECRET}"]\n', "other than a file name"),
        (f"project_doc_fallback_filenames = {{ x = '{SECRET}' }}\n", "is not a name or a list"),
        ("# " + "x" * MAX_CONFIG_BYTES + "\n", "it is over 256 KiB"),
    ],
)
def test_an_unusable_codex_config_is_a_skip_said_in_the_why_never_quoted(
    workspace_root: Path, home: Path, text: str, reason: str
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 40_000 + "\n"})
    evaluation = run(workspace_root, "codex", ".", codex_config(home, text))
    [item] = evaluation.loaded
    assert cut_at(evaluation) == BUDGET  # the default budget
    assert "~/.codex/config.toml is passed over (" in item.why
    assert reason in item.why
    assert "Codex's defaults are used for it" in item.why
    assert SECRET not in item.why


def test_a_linked_or_special_codex_config_is_not_read(
    workspace_root: Path, home: Path, tmp_path: Path
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 40_000 + "\n"})
    real = tmp_path / "elsewhere.toml"
    real.write_text("project_doc_max_bytes = 10\n")
    (home / ".codex" / "config.toml").symlink_to(real)
    evaluation = run(workspace_root, "codex", ".", AgentHomes(str(home)))
    assert cut_at(evaluation) == BUDGET
    assert "(it is a symbolic link" in evaluation.loaded[0].why
    (home / ".codex" / "config.toml").unlink()
    os.mkfifo(home / ".codex" / "config.toml")
    evaluation = run(workspace_root, "codex", ".", AgentHomes(str(home)))
    assert "(it is not a regular file)" in evaluation.loaded[0].why


def test_a_project_codex_config_linked_out_of_the_workspace_is_a_skip(
    workspace_root: Path, home: Path, tmp_path: Path
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 40_000 + "\n"})
    outside = tmp_path / "outside.toml"
    outside.write_text("project_doc_max_bytes = 10\n")
    (workspace_root / ".codex").mkdir()
    (workspace_root / ".codex" / "config.toml").symlink_to(outside)
    evaluation = run(workspace_root, "codex", ".", AgentHomes(str(home)))
    assert cut_at(evaluation) == BUDGET
    assert ".codex/config.toml is passed over (it cannot be read (symlink))" in (
        evaluation.loaded[0].why
    )


# -- Gemini CLI -----------------------------------------------------------------------------


def test_gemini_file_names_user_then_project_settings(workspace_root: Path, home: Path) -> None:
    write_tree(
        workspace_root,
        {"GEMINI.md": "g\n", "AGENTS.md": "a\n", "svc/CONTEXT.md": "c\n", "svc/GEMINI.md": "g\n"},
    )
    homes = AgentHomes(str(home))
    assert sources(run(workspace_root, "gemini", "svc", homes)) == ["GEMINI.md", "svc/GEMINI.md"]
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}})
    )
    user = run(workspace_root, "gemini", "svc", homes)
    assert sources(user) == ["AGENTS.md", "GEMINI.md", "svc/GEMINI.md"]
    assert "context.fileName AGENTS.md, GEMINI.md from ~/.gemini/settings.json" in (
        user.loaded[0].why
    )
    # The project's settings override the user's.
    write_tree(workspace_root, {".gemini/settings.json": '{"context": {"fileName": "CONTEXT.md"}}'})
    project = run(workspace_root, "gemini", "svc", homes)
    assert sources(project) == ["svc/CONTEXT.md"]
    assert "context.fileName CONTEXT.md from .gemini/settings.json" in project.loaded[0].why


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f'{{"context": {{"fileName": "{SECRET}"', "it is not valid JSON"),
        (f'["{SECRET}"]', "it is not a JSON table"),
        (f'{{"context": {{"fileName": {{"x": "{SECRET}"}}}}}}', "is not a name or a list"),
        (f'{{"context": "{SECRET}"}}', "its context is not an object"),
    ],
)
def test_unusable_gemini_settings_are_a_skip_and_the_default_name_stands(
    workspace_root: Path, home: Path, text: str, reason: str
) -> None:
    write_tree(workspace_root, {"GEMINI.md": "g\n", ".gemini/settings.json": text})
    evaluation = run(workspace_root, "gemini", ".", AgentHomes(str(home)))
    assert sources(evaluation) == ["GEMINI.md"]
    why = evaluation.loaded[0].why
    assert ".gemini/settings.json is passed over (" in why
    assert reason in why
    assert "Gemini CLI's defaults are used for it" in why
    assert SECRET not in why


# -- through the CLI process, with the homes in its environment ------------------------------


def test_the_cli_reads_the_homes_from_its_environment(
    tmp_path: Path, workspace_root: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(workspace_root, {"AGENTS.md": "a" * 300 + "\n", "CONTEXT.md": "c\n"})
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text("project_doc_max_bytes = 100\n")
    (home / ".gemini" / "settings.json").write_text('{"context": {"fileName": ["CONTEXT.md"]}}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    cli = Cli(tmp_path / "rutter-home", workspace_root)
    cli.json("workspace", "register", "demo", str(workspace_root))
    codex = cli.json("context", "instructions", "--as", "codex", "--target", ".")
    assert codex["sources"][0]["truncation"] == {"byte": 100, "line": 1, "lost_bytes": 201}
    assert (
        "project_doc_max_bytes = 100 from $CODEX_HOME/config.toml" in (codex["sources"][0]["why"])
    )
    gemini = cli.json("context", "instructions", "--as", "gemini", "--target", ".")
    assert [s["path"] for s in gemini["sources"]] == ["CONTEXT.md"]
    (codex_home / "config.toml").write_text(f"project_doc_max_bytes = [{SECRET}\n")
    broken = cli("context", "instructions", "--as", "codex", "--target", ".", "--json")
    assert broken.returncode == 0
    assert SECRET not in broken.stdout + broken.stderr
    [source] = json.loads(broken.stdout)["sources"]
    assert source["truncation"] is None  # the default 32 KiB budget holds all 301 bytes
    assert "$CODEX_HOME/config.toml is passed over (it is not valid TOML)" in source["why"]


def test_one_round_reads_the_settings_once_and_the_next_round_again(
    workspace_root: Path, home: Path
) -> None:
    from rutter_core.profiles.memo import Memo

    write_tree(workspace_root, {"AGENTS.md": "a" * 500 + "\n", "svc/x.go": ""})
    homes = codex_config(home, "project_doc_max_bytes = 100\n")
    reader, memo = FileReader(), Memo()
    first = evaluate(load_profile("codex"), str(workspace_root), ".", reader, memo, homes)
    codex_config(home, "project_doc_max_bytes = 200\n")
    same_round = evaluate(load_profile("codex"), str(workspace_root), "svc", reader, memo, homes)
    next_round = evaluate(load_profile("codex"), str(workspace_root), "svc", reader, Memo(), homes)
    assert (cut_at(first), cut_at(same_round), cut_at(next_round)) == (100, 100, 200)


@pytest.mark.asyncio
async def test_the_mcp_server_reads_the_homes_from_its_environment(
    tmp_path: Path, workspace_root: Path, home: Path
) -> None:
    from tests.mcp_client import Env, call, mcp_client

    write_tree(workspace_root, {"AGENTS.md": "a" * 300 + "\n", "src/a.go": ""})
    (home / ".codex" / "config.toml").write_text("project_doc_max_bytes = 120\n")
    cli = Cli(tmp_path / "rutter-home", workspace_root / "src")
    cli.json("workspace", "register", "demo", str(workspace_root))
    run_doc = cli.json("run", "create", "--workspace", "demo", "--goal", "g")
    async with mcp_client(Env(cli, workspace_root, run_doc), {"HOME": str(home)}) as client:
        codex = await call(client, "effective_instructions", {"target": "a.go", "agent": "codex"})
    [source] = codex["sources"]
    assert source["truncation"] == {"byte": 120, "line": 1, "lost_bytes": 181}
    assert "project_doc_max_bytes = 120 from ~/.codex/config.toml" in source["why"]
