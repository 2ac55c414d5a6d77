"""Human-readable output of `rutter context instructions --as AGENT`: the files an agent would
load, in its order, and where it would cut them (what is lost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rutter_cli.render import _out

if TYPE_CHECKING:
    from rich.console import Console

    from rutter_core.app.profiles import ProfileView, ProfileViews

AGENT_NAMES = {
    "codex": "Codex",
    "claude": "Claude Code",
    "gemini": "Gemini CLI",
    "copilot": "Copilot",
    "cursor": "Cursor",
}


def render_profile(console: Console, view: ProfileView, target: str) -> None:
    name = AGENT_NAMES[view.agent]
    count = len(view.sources)
    if not count:
        _out(console, f"{name} would load no project instruction file for {target}.")
        return
    files = "1 file" if count == 1 else f"{count} files"
    _out(console, f"{name} would load {files} for {target}, in this order:")
    for number, source in enumerate(view.sources, 1):
        prefix = f"{number:>2}. "
        _out(console, f"{prefix}{source.path}", hang=len(prefix))
        _out(console, source.why, indent=len(prefix), hang=2)
        cut = source.truncation
        if cut is not None:
            _out(
                console,
                f"CUT: {name} keeps bytes 0-{cut.byte - 1} and cuts at line {cut.line}; "
                f"{cut.lost_bytes} bytes are lost",
                indent=len(prefix),
                hang=2,
            )
    lost = [source for source in view.sources if source.truncation is not None]
    if not lost:
        _out(console, f"{name} reads every one of them whole.")


def render_profiles(console: Console, views: ProfileView | ProfileViews, target: str) -> None:
    from rutter_core.app.profiles import ProfileViews

    if not isinstance(views, ProfileViews):
        render_profile(console, views, target)
        return
    for index, view in enumerate(views.profiles):
        if index:
            console.out("", highlight=False)
        render_profile(console, view, target)


def render_other_agents(console: Console, others: dict[str, list[str]], target: str) -> None:
    """After the answer for people: the files agents would load by their own names that the
    answer does not deliver, each agent with the `--as` command that explains it."""
    if not others:
        return
    console.out("", highlight=False)
    _out(console, "Agents also load files of their own here (not part of the answer above):")
    import shlex

    for agent, paths in others.items():
        files = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        _out(
            console,
            f"- {AGENT_NAMES[agent]}: {files}; see `rutter context instructions --as {agent} "
            f"--target {shlex.quote(target)}`",
            indent=2,
            hang=2,
        )
