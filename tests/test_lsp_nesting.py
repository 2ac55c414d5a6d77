"""The language server's depth bound on raw bytes (`rutter_lsp.nesting`) against the depth of
the JSON it measures: brackets inside strings, escaped quotes and backslashes never count, and
the outline of a message keeps its top level."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rutter_lsp.nesting import TOO_DEEP, json_depth_exceeds, outline

# Strings made of what confuses a scanner: brackets, quotes, backslashes.
tricky_text = st.text(alphabet='[]{}"\\ a\u00e9', max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=40,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=8), st.booleans())
def test_the_raw_measure_is_the_depth_of_the_json(value: Any, limit: int, ascii_only: bool) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert json_depth_exceeds(body, limit) == (depth(value) > limit)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(tricky_text, json_values, max_size=4), st.integers(min_value=1, max_value=6))
def test_the_outline_keeps_the_top_level(message: dict[str, Any], limit: int) -> None:
    shown = outline(json.dumps(message).encode(), limit)
    assert isinstance(shown, dict)
    assert shown.keys() == message.keys()
    for key, value in message.items():
        if not isinstance(value, list | dict):
            assert shown[key] == value
        elif depth(value) + 1 > limit:
            assert shown[key] == TOO_DEEP
        else:
            assert shown[key] == type(value)()


def test_what_is_not_json_has_no_outline() -> None:
    assert outline(b'{"id": 1, "params": [[[') is None
    assert outline(b'{"id": 1, "params": ]]}') is None
    assert outline(b"not json") is None
