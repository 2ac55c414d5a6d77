"""Drift of active runs: where a run's pinned instructions differ from the disk, as diagnostics.

Pure functions over the inspection JSON that `rutter_core.runs.inspect_run` gives
(docs/reference/runs.md: `pinned`, `live`, `diff`). `findings_of` runs on the disk worker and turns
one inspection into per-file findings; `place` runs on the event loop and puts them on the open
documents:

- a changed or added instruction file that is open gets a Warning "changed since run RUN
  pinned it (revision N)" on the first line that differs, with related information pointing
  at what differs (the pinned line, the run's target);
- a removed file (it no longer applies: deleted, superseded or ignored) cannot carry a
  diagnostic, so it is reported on the nearest open instruction file of the run's stack, else
  on the run's target if that is open;
- a stale run with no per-file finding (only the order or the ignored entries changed) is
  reported the same way as a removal.

Every diagnostic carries `data = {"run_id", "revision"}` so the code action knows which run
to review.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from lsprotocol import types

from rutter_lsp.positions import TextPositions

DRIFT_CODE: Final = "instructions_drift"
SOURCE: Final = "rutter"
MAX_QUOTED: Final = 120
"""Characters of a pinned line quoted in related information."""

FindingKind = Literal["changed", "added", "removed", "reordered"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference between a run's pinned snapshot and the disk."""

    kind: FindingKind
    path: str
    """Workspace-relative path of the instruction file (the target for `reordered`)."""
    line: int = 0
    """0-based line of the live file where it first differs (changed files)."""
    pinned_line: str | None = None
    """That line as the run pinned it (None: the pinned file is shorter)."""


@dataclass(frozen=True, slots=True)
class RunDrift:
    """What the editor shows about one active run."""

    run_id: str
    workspace_id: str
    target: str
    revision: int | None
    stale: bool
    findings: tuple[Finding, ...]
    stack: tuple[str, ...]
    """Paths of the live (else pinned) sources, nearest last: where removals are reported."""
    live_error: str | None = None
    """The code of the error when live discovery fails closed (nothing can be confirmed)."""
    made_through: str | None = None
    """The run's own workspace when it is not `workspace_id`: a run made through another
    registration of the project (another path or machine), its drift computed against
    `workspace_id`'s files."""

    def label(self) -> str:
        revision = "no revision" if self.revision is None else f"revision {self.revision}"
        return f"run {self.run_id} pinned it ({revision})"


def _sources(snapshot: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(snapshot, dict) or "sources" not in snapshot:
        return {}
    return {str(source["path"]): source for source in snapshot["sources"]}


def first_difference(pinned: str, live: str) -> tuple[int, str | None]:
    """The first line (0-based) where `live` differs from `pinned`, and the pinned line."""
    pinned_lines = pinned.splitlines()
    live_lines = live.splitlines()
    for number, (before, after) in enumerate(zip(pinned_lines, live_lines, strict=False)):
        if before != after:
            return number, before
    shorter = min(len(pinned_lines), len(live_lines))
    last_live = max(0, len(live_lines) - 1)
    if len(pinned_lines) > shorter:  # lines were removed at the end
        return min(shorter, last_live), pinned_lines[shorter]
    if len(live_lines) > shorter:  # lines were added at the end
        return shorter, None
    return last_live, None  # only line endings differ


def findings_of(
    inspection: Mapping[str, Any], workspace_id: str, target: str, made_through: str | None = None
) -> RunDrift:
    """The findings of one run's inspection (docs/reference/runs.md shape), against the files
    of `workspace_id` (`made_through`: the run's own workspace, when another)."""
    run_id = str(inspection["run_id"])
    revision = inspection.get("revision")
    live = inspection.get("live")
    pinned_sources = _sources(inspection.get("pinned"))
    live_sources = _sources(live)
    stack_from = live_sources or pinned_sources
    stack = tuple(stack_from)
    live_error = None
    if isinstance(live, dict) and isinstance(live.get("error"), dict):
        live_error = str(live["error"].get("code", "error"))
    diff = inspection.get("diff") or {}
    stale = bool(inspection.get("stale"))
    findings: list[Finding] = []
    if stale:
        for path in diff.get("changed", []):
            before = pinned_sources.get(path, {}).get("content", "")
            after = live_sources.get(path, {}).get("content", "")
            line, pinned_line = first_difference(str(before), str(after))
            findings.append(Finding("changed", path, line, pinned_line))
        findings.extend(Finding("added", path) for path in diff.get("added", []))
        findings.extend(Finding("removed", path) for path in diff.get("removed", []))
        if not findings:
            findings.append(Finding("reordered", target))
    return RunDrift(
        run_id=run_id,
        workspace_id=workspace_id,
        target=target,
        revision=revision if isinstance(revision, int) else None,
        stale=stale,
        findings=tuple(findings),
        stack=stack,
        live_error=live_error,
        made_through=made_through,
    )


@dataclass(frozen=True, slots=True)
class DocumentRef:
    """What `place` needs to know about an open document."""

    uri: str
    workspace_id: str
    rel: str
    text: str


def _last_line(positions: TextPositions) -> int:
    """The last line with content (not the empty one after a final line break): the buffer
    may be older than the disk, so a finding's line can lie past its end."""
    last = max(0, positions.line_count - 1)
    if last > 0 and positions.line_text(last) == "":
        last -= 1
    return last


def _quote(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_QUOTED else line[: MAX_QUOTED - 1] + "…"


def _nearest(
    path: str, drift: RunDrift, docs: Mapping[tuple[str, str], DocumentRef]
) -> DocumentRef | None:
    """The open instruction file of the run's stack nearest to `path`, else the target."""
    directory = posixpath.dirname(path)
    best: tuple[int, int, DocumentRef] | None = None
    for order, candidate in enumerate(drift.stack):
        doc = docs.get((drift.workspace_id, candidate))
        if doc is None or candidate == path:
            continue
        other = posixpath.dirname(candidate)
        common = posixpath.commonpath([directory, other]) if directory and other else ""
        score = (len(common.split("/")) if common else 0, order)
        if best is None or score > best[:2]:
            best = (*score, doc)
    if best is not None:
        return best[2]
    return docs.get((drift.workspace_id, drift.target))


def _pinned_text(finding: Finding, drift: RunDrift) -> str:
    """What the run pinned where the disk now differs."""
    pinned = f"revision {drift.revision}" if drift.revision is not None else "the run"
    if finding.kind == "changed":
        if finding.pinned_line is None:
            return f"{pinned} pinned {finding.path} without this line"
        return f"{pinned} pinned this line as: {_quote(finding.pinned_line)}"
    if finding.kind == "added":
        return f"{pinned} did not include {finding.path}"
    if finding.kind == "removed":
        return f"{pinned} includes {finding.path}"
    return f"{pinned} pinned another order or other ignored files for {drift.target}"


def place(
    drifts: Sequence[RunDrift], docs: Mapping[tuple[str, str], DocumentRef], encoding: str
) -> dict[str, list[types.Diagnostic]]:
    """The drift diagnostics of the open documents, by URI (only documents that have some)."""
    placed: dict[str, list[types.Diagnostic]] = {}
    for drift in drifts:
        if not drift.stale:
            continue
        data = {"run_id": drift.run_id, "revision": drift.revision}
        target_doc = docs.get((drift.workspace_id, drift.target))
        for finding in drift.findings:
            here = docs.get((drift.workspace_id, finding.path))
            if finding.kind in ("changed", "added") and here is not None:
                doc = here
                positions = TextPositions(doc.text, encoding)
                line = min(finding.line, _last_line(positions))
                where = positions.line_range(line)
                if finding.kind == "changed":
                    message = f"{finding.path} changed since {drift.label()}"
                else:
                    message = (
                        f"{finding.path} applies to {drift.target} now but did not when "
                        f"{drift.label()}"
                    )
            else:
                doc_or_none = _nearest(finding.path, drift, docs)
                if doc_or_none is None:
                    continue
                doc = doc_or_none
                positions = TextPositions(doc.text, encoding)
                where = positions.line_range(0)
                if finding.kind == "reordered":
                    message = (
                        f"the instructions for {drift.target} changed (order or ignored files) "
                        f"since {drift.label()}"
                    )
                elif finding.kind == "removed":
                    message = f"{finding.path} no longer applies, but {drift.label()}"
                else:
                    message = f"{finding.path} changed since {drift.label()}"
            related = [
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=doc.uri, range=where),
                    message=_pinned_text(finding, drift),
                )
            ]
            if target_doc is not None and target_doc.uri != doc.uri:
                related.append(
                    types.DiagnosticRelatedInformation(
                        location=types.Location(
                            uri=target_doc.uri, range=TextPositions("", encoding).line_range(0)
                        ),
                        message=f"run {drift.run_id} works on {drift.target}",
                    )
                )
            placed.setdefault(doc.uri, []).append(
                types.Diagnostic(
                    range=where,
                    message=f"{message}; review and confirm a refresh to move the run to it",
                    severity=types.DiagnosticSeverity.Warning,
                    code=DRIFT_CODE,
                    source=SOURCE,
                    related_information=related,
                    data=data,
                )
            )
    return placed
