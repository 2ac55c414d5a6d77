"""The scan: candidates at every anchor, the preferred non-overlapping ones, and the re-scan
of glued findings."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from rutter_core.discovery.redaction.anchors import ascii_lower, pivots
from rutter_core.discovery.redaction.assignments import KEYWORD_SCANS, assignment
from rutter_core.discovery.redaction.formats import TOKEN_CHARS
from rutter_core.discovery.redaction.kinds import MARKERS, RedactionResult, SecretFinding
from rutter_core.discovery.redaction.literals import is_documented_example
from rutter_core.discovery.redaction.normalise import normalise

# (context?, -length, -rank, start, end, kind): sorting gives the order in which overlapping
# candidates are preferred.
_Candidate = tuple[bool, int, int, int, int, str]


def _candidates(text: str) -> Iterable[_Candidate]:
    seen: set[tuple[int, int, str]] = set()
    for pivot in pivots():
        for hit in pivot.scan.finditer(text):
            pivot_at = hit.start()
            for anchor, index, after, rules in pivot.anchors:
                start = pivot_at - index
                if start < 0 or not text.startswith(anchor, start):
                    continue
                if after is not None and after.match(text, start + len(anchor)) is None:
                    continue
                for rule in rules:
                    span = rule.match(text, start)
                    if span is None or _example(text, span, rule.kind):
                        continue
                    if (span[0], span[1], rule.kind) not in seen:
                        seen.add((span[0], span[1], rule.kind))
                        yield rule.context, span[0] - span[1], -rule.rank, *span, rule.kind
    low = ascii_lower(text)
    reversed_low = ""
    for scan in KEYWORD_SCANS:
        for hit in scan.finditer(low):
            reversed_low = reversed_low or low[::-1]
            found = assignment(text, low, reversed_low, hit)
            if found is not None and not _example(text, found[1:], found[0]):
                kind, start, end = found
                rank = 1 if kind == "secret_assignment" else 2
                yield True, start - end, -rank, start, end, kind


def _example(text: str, span: tuple[int, int], kind: str) -> bool:
    """Documented example values and masked tokens are shown, never a private key block."""
    return kind != "private_key" and is_documented_example(text[span[0] : span[1]])


def _select(text: str) -> list[SecretFinding]:
    """One pass: the preferred non-overlapping candidates, sorted by start."""
    starts: list[int] = []
    chosen: list[SecretFinding] = []
    for _context, _length, _rank, start, end, kind in sorted(_candidates(text)):
        at = bisect_right(starts, start)
        if at and chosen[at - 1].end > start:
            continue
        if at < len(starts) and starts[at] < end:
            continue
        starts.insert(at, start)
        chosen.insert(at, SecretFinding(kind, start, end))
    return chosen


def _splice(text: str, findings: Iterable[SecretFinding]) -> str:
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        parts.append(text[cursor : finding.start])
        parts.append(MARKERS[finding.kind])
        cursor = finding.end
    parts.append(text[cursor:])
    return "".join(parts)


def _glued(text: str, findings: list[SecretFinding]) -> bool:
    return any(
        (finding.start and text[finding.start - 1] in TOKEN_CHARS)
        or (finding.end < len(text) and text[finding.end] in TOKEN_CHARS)
        for finding in findings
    )


def _to_original(findings: list[SecretFinding], found: SecretFinding) -> SecretFinding:
    """Map a finding in the redacted text back to the original; a marker it touches counts
    as the whole secret behind it."""
    starts, shift = [], 0
    for finding in findings:
        starts.append((finding.start + shift, finding))
        shift += len(MARKERS[finding.kind]) - (finding.end - finding.start)

    def original(position: int, last: bool) -> int:
        before = [item for item in starts if item[0] <= position]
        if not before:
            return position
        marker_start, finding = before[-1]
        inside = position - marker_start
        if inside < len(MARKERS[finding.kind]):
            return finding.end - 1 if last else finding.start
        return finding.end + inside - len(MARKERS[finding.kind])

    return SecretFinding(
        found.kind, original(found.start, False), original(found.end - 1, True) + 1
    )


def _merge(findings: list[SecretFinding]) -> list[SecretFinding]:
    """Sort and join overlapping findings; a joined span keeps the longer part's kind."""
    merged: list[SecretFinding] = []
    for finding in sorted(findings, key=lambda f: (f.start, f.start - f.end)):
        last = merged[-1] if merged else None
        if last is None or finding.start >= last.end:
            merged.append(finding)
            continue
        longer = last if last.end - last.start >= finding.end - finding.start else finding
        merged[-1] = SecretFinding(longer.kind, last.start, max(last.end, finding.end))
    return merged


def find_secrets(text: str) -> list[SecretFinding]:
    """Secrets in `text`, sorted by start and never overlapping.

    Text with look-alike or invisible characters is scanned twice, as written and as its
    ASCII matching copy (`normalise`); findings in the copy are mapped back to the original
    span and joined with the others.
    """
    findings = _find(text)
    copy = normalise(text)
    if copy is None:
        return findings
    extra = [
        SecretFinding(found.kind, *copy.original(found.start, found.end))
        for found in _find(copy.text)
    ]
    if not extra:
        return findings
    return _merge([*findings, *extra])


def _find(text: str) -> list[SecretFinding]:
    """One text's findings, sorted by start and never overlapping.

    Boundaries are judged on the neighbours a secret has in `text`; once a neighbour is
    replaced by a marker another secret can stand free (a token glued to a key header). So
    while a finding touches a token or name character, the redacted text is scanned again
    until nothing new turns up, which makes `redact(redact(t).text)` a no-op. Findings set
    off by spaces, quotes, `=`, `:` or `@` (nearly all) cannot change a neighbour's reading.
    """
    findings = _select(text)
    covered = sum(finding.end - finding.start for finding in findings)
    while _glued(text, findings):
        extra = _select(_splice(text, findings))
        if not extra:
            break
        merged = _merge([*findings, *(_to_original(findings, found) for found in extra)])
        now = sum(finding.end - finding.start for finding in merged)
        if now <= covered:  # pragma: no cover - a rule matched inside a marker; stop safely
            break
        findings, covered = merged, now
    return findings


def redact(text: str) -> RedactionResult:
    findings = tuple(find_secrets(text))
    if not findings:
        return RedactionResult(text, ())
    return RedactionResult(_splice(text, findings), findings)
