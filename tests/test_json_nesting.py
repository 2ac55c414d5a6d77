"""The one bound on how deep client JSON nests (issue 34), checked on raw text before any
parser sees it: exact on every JSON text (against the parsed value's real depth, strings full
of brackets, quotes and backslashes included), safe on malformed text, and on the inputs built
to make a scanner slow or a parser recurse."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rutter_core.kernel.nesting import (
    MAX_JSON_DEPTH,
    NESTING_TOO_DEEP,
    json_depth_exceeds,
    nesting_too_deep,
    value_depth_exceeds,
)

TRICKY = st.text(alphabet='[]{}"\\ab\n\u00e9\U0001f600', max_size=12)
"""Strings made of what a depth scanner could mistake for structure."""

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TRICKY, children, max_size=4),
    max_leaves=40,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def nested(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(min_value=0, max_value=8), st.booleans())
def test_the_raw_check_agrees_with_the_parsed_depth(value: Any, limit: int, ascii: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii)
    expected = depth(value) > limit
    assert json_depth_exceeds(text, limit) is expected, text
    assert json_depth_exceeds(text.encode("utf-8"), limit) is expected, text
    assert value_depth_exceeds(value, limit) is expected


def test_the_bound_and_its_edges() -> None:
    assert MAX_JSON_DEPTH == 64
    assert not json_depth_exceeds(nested(64))
    assert json_depth_exceeds(nested(65))
    assert json_depth_exceeds('{"a":' * 65 + "1" + "}" * 65)
    # Brackets inside strings are text, escaped quotes do not end a string.
    assert not json_depth_exceeds(json.dumps(["[" * 500, "\\" * 7 + '"' + "{" * 300]))
    assert not json_depth_exceeds("1")
    assert not json_depth_exceeds('"[[["', 0)
    assert json_depth_exceeds("[]", 0)
    assert not json_depth_exceeds("[]", 1)


def test_malformed_and_hostile_text_is_answered_without_recursion() -> None:
    # Unterminated strings, unbalanced brackets, lone backslashes: an answer, never a crash;
    # an opening run before an unterminated string still counts.
    assert json_depth_exceeds("[" * 100_000 + '"')
    assert json_depth_exceeds("{" * 100_000)
    assert not json_depth_exceeds("]" * 100_000)
    assert not json_depth_exceeds('["' + "\\" + "[" * 100)
    # Shapes that make a naive string pattern backtrack at every quote.
    assert json_depth_exceeds("[" * 70 + '"\\"' * 200_000)
    assert json_depth_exceeds(b"[" * 70 + b'"\\' * 200_000)
    # Lone surrogates (JSON's \ud800 escapes, decoded) do not break the check.
    assert json_depth_exceeds("[" * 65 + "\ud800")
    assert value_depth_exceeds(json.loads(nested(900)))


def test_the_error_names_the_rule_and_never_the_input() -> None:
    error = nesting_too_deep()
    assert error.code == NESTING_TOO_DEEP == "nesting_too_deep"
    assert error.to_json() == {
        "code": "nesting_too_deep",
        "message": "the message nests objects and arrays more than 64 levels deep",
        "details": {"max_depth": 64},
    }
