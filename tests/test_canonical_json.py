"""Our JCS fast path must produce exactly the reference implementation's bytes."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from rutter_core.discovery.fingerprint import canonical_json, fingerprint

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
)
_json = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=["Cs"]), max_size=6), children, max_size=4
        )
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_matches_reference_implementation(value: Any) -> None:
    try:
        expected = bytes(rfc8785.dumps(value))
    except rfc8785.IntegerDomainError:
        with pytest.raises(rfc8785.IntegerDomainError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\uff00": 2, "a": 3},  # UTF-16 order differs from code-point order
        {"numbers": [1.5, 1e21, 1e-7, -0.0, 100.0]},  # ECMAScript number formatting
        {"ctl": '\x00\x1f\x7f\u2028"\\/'},
        [2**53 - 1, -(2**53 - 1)],
    ],
)
def test_edge_cases(value: Any) -> None:
    assert canonical_json(value) == bytes(rfc8785.dumps(value))


def test_fingerprint_excludes_only_named_top_level_keys() -> None:
    base = {"a": 1, "b": {"a": 2}}
    assert fingerprint(base, exclude=frozenset({"a"})) == fingerprint({"b": {"a": 2}})
    assert fingerprint(base) != fingerprint({"b": {"a": 2}})
    assert fingerprint({"x": 1, "y": 2}) == fingerprint({"y": 2, "x": 1})
