"""What the editor says on an instruction file about each agent: where it cuts the file, which
files it never reads, imports outside the workspace or too deep, rules excluded from it, and
glob front matter that matches no file (so its agent never loads the rule).

Cheap by construction: one evaluation per agent for the file's own directory (the chain from
the project root, read through the shared identity-cached reader), and for a rule file with
globs one bounded, cached listing of the project (`listing.ProjectFiles`).
"""

from __future__ import annotations

import os
import posixpath

from rutter_core.discovery.fsread import FileReader, lstat_or_none
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.engine import Memo, Note, evaluate
from rutter_core.profiles.frontmatter import parse_front_matter
from rutter_core.profiles.globs import compile_glob, split_globs
from rutter_core.profiles.listing import ProjectFiles
from rutter_core.profiles.model import AGENTS, AgentName, FileRule, Profile, RulesDir, load_profile
from rutter_core.profiles.reading import find, read


def _rules_spec(profile: Profile, rel: str) -> tuple[RulesDir, str] | None:
    """The rules directory spec `rel` belongs to, with its level."""
    for spec in profile.sources:
        if not isinstance(spec, RulesDir) or not rel.lower().endswith(spec.suffixes):
            continue
        if rel.startswith(f"{spec.dir}/"):
            return spec, "."
        at = rel.find(f"/{spec.dir}/")
        if at >= 0 and spec.where == "each_level":
            return spec, rel[:at]
    return None


def _globs_match_nothing(
    profile: Profile, root: str, rel: str, project_root: str, files: ProjectFiles,
    reader: FileReader,
) -> Note | None:  # fmt: skip
    found_spec = _rules_spec(profile, rel)
    if found_spec is None:
        return None
    spec, level = found_spec
    if spec.globs_key is None:
        return None
    found = find(root, rel)
    if found is None:
        return None
    matter = parse_front_matter(read(reader, root, found).text)
    globs = split_globs(matter.get(spec.globs_key))
    if not globs:
        return None
    base = project_root if spec.globs_relative_to == "project_root" else level
    top = root if base == "." else os.path.join(root, *base.split("/"))
    listing = files.get(top)
    if not listing.complete:
        return None
    compiled = [compile_glob(g, star_matches_all=spec.star_matches_all) for g in globs]
    if any(glob.matches(path) for path in listing.files for glob in compiled):
        return None
    return Note(
        rel,
        "glob_matches_nothing",
        f"{profile.name}'s `{spec.globs_key}:` globs match no file in the project: it never "
        "loads this rule",
        matter.lines.get(spec.globs_key),
    )


def _owns(profile: Profile, rel: str) -> bool:
    """Whether `profile`'s agent reads `rel` by one of its names (not its rules)."""
    return any(
        rel == name or rel.endswith(f"/{name}")
        for spec in profile.sources
        if isinstance(spec, FileRule)
        for name in spec.names
    )


def _may_note(profile: Profile, root: str, rel: str) -> bool:
    """Whether `profile` can say anything about `rel`, from its kinds of notes alone: what
    keeps the editor from evaluating every agent for every open file."""
    if _rules_spec(profile, rel) is not None:
        return True  # globs, excludeAgent, imports in a rule
    limits = profile.limits
    cuts = limits.budget_bytes is not None or limits.per_file_bytes is not None
    if _owns(profile, rel) and (cuts or profile.imports is not None):
        return True
    name = posixpath.basename(rel)
    if name not in profile.not_read:
        return False
    directory = os.path.join(root, *posixpath.dirname(rel).split("/")) if "/" in rel else root
    return any(
        lstat_or_none(os.path.join(directory, own)) is not None
        for spec in profile.sources
        if isinstance(spec, FileRule)
        for own in spec.names
        if "/" not in own
    )


def notes_for_file(
    root: str,
    rel: str,
    agents: tuple[AgentName, ...],
    reader: FileReader,
    files: ProjectFiles,
    memo: Memo | None = None,
) -> list[tuple[AgentName, Note]]:
    """Each agent's notes about the file at workspace-relative `rel`. An agent whose view
    fails closed says nothing here (the file's discovery diagnostics say why)."""
    directory = posixpath.dirname(rel) or "."
    found: list[tuple[AgentName, Note]] = []
    for agent in agents:
        profile = load_profile(agent)
        if not _may_note(profile, root, rel):
            continue
        try:
            evaluation = evaluate(profile, root, directory, reader, memo)
            found.extend((agent, note) for note in evaluation.notes if note.rel == rel)
            glob_note = _globs_match_nothing(
                profile, root, rel, evaluation.project_root, files, reader
            )
        except RutterError:
            continue
        if glob_note is not None:
            found.append((agent, glob_note))
    return found


def is_agent_file(rel: str) -> bool:
    """Whether some agent reads the file at `rel` (workspace-relative, or an absolute path) by
    its name or its rules directory: the editor keeps those buffers and diagnoses them."""
    for agent in AGENTS:
        for spec in load_profile(agent).sources:
            if isinstance(spec, FileRule):
                if any(rel == name or rel.endswith(f"/{name}") for name in spec.names):
                    return True
            elif rel.lower().endswith(spec.suffixes) and (
                rel.startswith(f"{spec.dir}/") or f"/{spec.dir}/" in rel
            ):
                return True
    return False
