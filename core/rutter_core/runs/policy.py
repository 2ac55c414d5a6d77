"""What a run accepts: who may change runs, and the goal, mode, profile and fingerprints a
caller gives. Each check raises a typed `rejected` error that says what is wrong."""

from __future__ import annotations

import re
from typing import Final

from rutter_core.discovery.redaction import redact
from rutter_core.kernel.errors import Hint, RejectedError
from rutter_core.kernel.text import require_readable
from rutter_core.runs.model import RUN_MODES, RunMode, is_run_mode

MAX_GOAL_CHARS: Final = 4096
PROFILE_NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
FINGERPRINT_PATTERN: Final = re.compile(r"[0-9a-f]{64}")


def validate_goal(goal: str) -> str:
    """The goal as stored: stripped, non-empty, bounded, readable (`kernel.text`: no control,
    bidirectional or invisible characters), no secrets."""
    text = goal.strip()
    if not text:
        raise RejectedError("invalid_goal", "the goal is empty; say what the run should achieve")
    if len(text) > MAX_GOAL_CHARS:
        raise RejectedError(
            "invalid_goal",
            f"the goal has {len(text)} characters, more than the limit of {MAX_GOAL_CHARS}; "
            "shorten it and keep details in the instruction files",
            details={"limit": MAX_GOAL_CHARS, "length": len(text)},
        )
    require_readable("goal", text, allowed="\n\t")
    found = redact(text)
    if found.redacted:
        kinds = ", ".join(kind for kind, _count in found.counts())
        raise RejectedError(
            "secret_in_goal",
            f"the goal contains what looks like a secret ({kinds}); goals are stored in plain "
            "text, so remove it and refer to the secret by name",
            details={"kinds": [kind for kind, _count in found.counts()]},
        )
    return text


def validate_mode(mode: str) -> RunMode:
    if not is_run_mode(mode):
        raise RejectedError(
            "invalid_mode",
            f"invalid mode {mode!r}; use one of {', '.join(RUN_MODES)}",
            details={"mode": mode, "allowed": list(RUN_MODES)},
        )
    return mode


def validate_profile(profile: str | None) -> str | None:
    if profile is not None and PROFILE_NAME_PATTERN.fullmatch(profile) is None:
        raise RejectedError(
            "invalid_profile",
            f"invalid profile name {profile!r}: use 1-64 characters of a-z, 0-9, '.', '_' "
            "and '-', starting with a letter or digit",
            details={"profile": profile},
        )
    return profile


def validate_fingerprint(value: str, *, option: str, run_id: str) -> None:
    """`value` is a fingerprint (64 lowercase hex digits); `option` names which one (the
    expected pinned or live fingerprint), `run_id` the run whose review shows both."""
    if FINGERPRINT_PATTERN.fullmatch(value) is None:
        raise RejectedError(
            "invalid_fingerprint",
            f"{option} {value!r} is not a fingerprint (64 lowercase hex digits)",
            details={"option": option, "value": value},
            hint=Hint("copy_fingerprints", {"run_id": run_id}),
        )


def not_pinned(run_id: str) -> RejectedError:
    """A run with no pinned revision yet (an imported run before its first confirmation): it
    can be neither checkpointed nor branched from its start, which would pin nothing."""
    return RejectedError(
        "run_not_pinned",
        f"run {run_id} has no pinned instructions yet, and a checkpoint, fork or resume names "
        "the instructions it pins; confirm its first revision first",
        details={"run_id": run_id},
        hint=Hint("review_run_again", {"run_id": run_id}),
    )
