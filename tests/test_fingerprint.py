"""Fingerprints (docs/reference/identifiers-and-fingerprints.md and docs/reference/discovery.md):
JCS canonical JSON, stable across processes, blind to exactly the excluded fields and to nothing
else."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from rutter_core.discovery.fingerprint import canonical_json
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import Snapshot, snapshot_fingerprint
from rutter_core.discovery.walk import discover
from tests.conftest import write_tree

TARGET = "internal/parser/input.go"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

# Every kind of entry a snapshot can hold: override + superseded AGENTS.md, a blank override,
# an ignored rule, rules with non-ASCII names (byte-order sorting), CRLF/BOM content, a
# redacted secret, and conflicts between levels.
TREE: dict[str, str | bytes] = {
    "AGENTS.md": "root workflow\r\nsecond line\r\n",
    "AGENTS.override.md": b"\xef\xbb\xbfoverride \xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82\n",
    "CLAUDE.md": f"use {GITHUB_TOKEN} for the bot\n",
    ".claude/CLAUDE.md": "claude dir\n",
    ".prayu/instructions.md": "prayu \u4e2d\u6587\n",
    ".prayu/instructions.ignore": "# private\n.prayu/rules/private.md\n",
    ".prayu/rules/private.md": "never delivered\n",
    ".prayu/rules/\u00fcber.md": "umlaut rule\n",
    ".prayu/rules/Zeta.MD": "upper rule\n",
    ".prayu/rules/go/style.md": "root style\n",
    "internal/AGENTS.override.md": " \n",
    "internal/AGENTS.md": "internal\n",
    "internal/.prayu/rules/go/style.md": "internal style\n",
    "internal/parser/CLAUDE.md": "parser claude\r",
    "internal/parser/input.go": "package parser\n",
}

CHILD = """
import json, sys
from rutter_core.discovery.walk import discover
from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.snapshot import snapshot_fingerprint

snapshot = discover(sys.argv[1], sys.argv[2], sys.argv[3], reader=FileReader())
data = snapshot.to_json()
print(json.dumps({
    "fingerprint": snapshot.fingerprint,
    "recomputed": snapshot_fingerprint(data),
    "sources": [source["path"] for source in data["sources"]],
    "hash_probe": hash("rutter"),
}))
"""


def build(root: Path) -> Snapshot:
    write_tree(root, TREE)
    return discover("demo", str(root), TARGET, reader=FileReader())


def run_child(root: Path, cwd: Path, workspace_id: str, **environment: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.update(environment)
    completed = subprocess.run(
        [sys.executable, "-c", CHILD, workspace_id, str(root), TARGET],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


# -- stability across processes ---------------------------------------------------------------


def test_fingerprint_is_equal_across_processes(workspace_root: Path, tmp_path: Path) -> None:
    snapshot = build(workspace_root)
    data = snapshot.to_json()
    # The tree exercises what it is meant to (otherwise the comparison proves little).
    assert [source["path"] for source in data["sources"]] == [
        "AGENTS.override.md",
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        ".prayu/instructions.md",
        ".prayu/rules/Zeta.MD",
        ".prayu/rules/go/style.md",
        ".prayu/rules/\u00fcber.md",
        "internal/AGENTS.md",
        "internal/.prayu/rules/go/style.md",
        "internal/parser/CLAUDE.md",
    ]
    assert {entry["reason"] for entry in data["ignored"]} == {
        "superseded",
        "blank_override",
        "ignore_file",
    }
    assert data["conflicts"]
    assert any(source["redacted"] for source in data["sources"])

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = run_child(workspace_root, elsewhere, "demo", PYTHONHASHSEED="0")
    # Another hash seed, directory, workspace ID, time zone and locale.
    second = run_child(
        workspace_root,
        Path("/"),
        "another-workspace",
        PYTHONHASHSEED="4242",
        TZ="Pacific/Chatham",
        LC_ALL="C",
    )
    # Different hash seeds really were in effect.
    assert first["hash_probe"] != second["hash_probe"]
    for child in (first, second):
        assert child["sources"] == [source["path"] for source in data["sources"]]
        assert child["fingerprint"] == snapshot.fingerprint
        assert child["recomputed"] == snapshot.fingerprint
    assert snapshot_fingerprint(data) == snapshot.fingerprint
    assert snapshot_fingerprint(json.loads(json.dumps(data))) == snapshot.fingerprint


def test_fingerprint_is_sha256_of_jcs_without_excluded_fields(workspace_root: Path) -> None:
    data = build(workspace_root).to_json()
    # Written out from the words of the reference, independently of snapshot_fingerprint.
    body = {
        key: value
        for key, value in data.items()
        if key not in {"fingerprint", "loaded_at", "workspace_id"}
    }
    body["sources"] = [
        {
            key: value
            for key, value in source.items()
            if key not in {"content", "loaded_at", "why_effective"}
        }
        for source in data["sources"]
    ]
    expected = hashlib.sha256(bytes(rfc8785.dumps(body))).hexdigest()
    assert data["fingerprint"] == expected
    assert len(expected) == 64
    assert expected == expected.lower()


# -- which fields count -----------------------------------------------------------------------

JsonPath = tuple[str | int, ...]

EXCLUDED_TOP = {"fingerprint", "loaded_at", "workspace_id"}
EXCLUDED_SOURCE = {"content", "loaded_at", "why_effective"}


def is_excluded(path: JsonPath) -> bool:
    if len(path) == 1:
        return path[0] in EXCLUDED_TOP
    return len(path) == 3 and path[0] == "sources" and path[2] in EXCLUDED_SOURCE


def leaves(value: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def containers(value: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    if isinstance(value, dict | list):
        yield path, value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from containers(item, (*path, key))


def node_at(data: Any, path: JsonPath) -> Any:
    node = data
    for step in path:
        node = node[step]
    return node


def parent_of(data: Any, path: JsonPath) -> Any:
    return node_at(data, path[:-1])


def changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "~"
    raise AssertionError(f"unexpected leaf {value!r}")


def test_every_field_but_the_excluded_ones_moves_the_fingerprint(workspace_root: Path) -> None:
    data = build(workspace_root).to_json()
    base = snapshot_fingerprint(data)
    seen_excluded: set[JsonPath] = set()
    count = 0
    for path, value in leaves(data):
        mutated = copy.deepcopy(data)
        parent_of(mutated, path)[path[-1]] = changed(value)
        moved = snapshot_fingerprint(mutated) != base
        if is_excluded(path):
            seen_excluded.add(path)
            assert not moved, f"excluded field {path} changed the fingerprint"
        else:
            assert moved, f"field {path} does not change the fingerprint"
        count += 1
    # Every excluded field was present and checked, for every source.
    assert seen_excluded == {(key,) for key in EXCLUDED_TOP} | {
        ("sources", index, key) for index in range(len(data["sources"])) for key in EXCLUDED_SOURCE
    }
    assert count > 300  # authority, limits, ignored, conflicts, redactions all walked


def test_removing_or_adding_fields_moves_the_fingerprint_unless_excluded(
    workspace_root: Path,
) -> None:
    data = build(workspace_root).to_json()
    base = snapshot_fingerprint(data)
    for path, container in containers(data):
        if isinstance(container, dict):
            for key in container:
                mutated = copy.deepcopy(data)
                del parent_of(mutated, (*path, key))[key]
                moved = snapshot_fingerprint(mutated) != base
                assert moved != is_excluded((*path, key)), (path, key)
            # A field the reference does not exclude counts even under an excluded name
            # elsewhere (e.g. `content` inside an ignored entry).
            for new_key in ("extra", "content", "loaded_at"):
                if new_key in container:
                    continue
                mutated = copy.deepcopy(data)
                node_at(mutated, path)[new_key] = "x"
                moved = snapshot_fingerprint(mutated) != base
                assert moved != is_excluded((*path, new_key)), (path, new_key)
        elif len(container) >= 1:
            mutated = copy.deepcopy(data)
            node_at(mutated, path).pop()
            assert snapshot_fingerprint(mutated) != base, f"dropping from {path}"
            if len(container) >= 2 and container[0] != container[-1]:
                mutated = copy.deepcopy(data)
                node_at(mutated, path).reverse()
                assert snapshot_fingerprint(mutated) != base, f"reordering {path}"


def test_fingerprint_ignores_workspace_time_and_prose_only(workspace_root: Path) -> None:
    snapshot = build(workspace_root)
    data = snapshot.to_json()
    data["workspace_id"] = "renamed"
    data["loaded_at"] = "1999-12-31T23:59:59Z"
    data["fingerprint"] = "0" * 64
    for source in data["sources"]:
        source["content"] = "replaced wholesale"
        source["loaded_at"] = "1999-12-31T23:59:59Z"
        source["why_effective"] = "other words"
    assert snapshot_fingerprint(data) == snapshot.fingerprint
    # The snapshot_fingerprint input is not modified.
    assert data["sources"][0]["content"] == "replaced wholesale"


# -- JCS (RFC 8785) ---------------------------------------------------------------------------

# RFC 8785 section 3.2.2 (input exactly as printed there) and its canonical form.
RFC_INPUT = r"""{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
RFC_OUTPUT = (
    r'{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    r'"string":"€$\u000f\nA'
    "'"
    r'B\"\\\\\"/"}'
)

# RFC 8785 section 3.2.3: property sorting by UTF-16 code units.
RFC_SORT_INPUT = r"""{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"""
RFC_SORT_VALUES = [
    "Carriage Return",
    "One",
    "Control",
    "Latin Small Letter O With Diaeresis",
    "Euro Sign",
    "Emoji: Grinning Face",
    "Hebrew Letter Dalet With Dagesh",
]

# RFC 8785 appendix B: IEEE-754 bit patterns and their JCS number form.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def test_jcs_rfc_example() -> None:
    assert canonical_json(json.loads(RFC_INPUT)) == RFC_OUTPUT.encode("utf-8")


def test_jcs_sorts_keys_by_utf16_code_units() -> None:
    value = json.loads(RFC_SORT_INPUT)
    out = canonical_json(value)
    assert list(json.loads(out).values()) == RFC_SORT_VALUES
    assert out.startswith(b'{"\\r":"Carriage Return","1":"One","\xc2\x80":"Control",')
    # The emoji (UTF-16 D83D DE00) sorts before U+FB33, unlike code-point order.
    assert out.index("\U0001f600".encode()) < out.index("\ufb33".encode())
    # And the same for a dict that is otherwise "simple" (strings only, one level).
    assert list(json.loads(canonical_json({"\ufb33": 1, "\U0001f600": 2, "a": 3}))) == [
        "a",
        "\U0001f600",
        "\ufb33",
    ]


@pytest.mark.parametrize(("bits", "text"), RFC_NUMBERS)
def test_jcs_numbers(bits: str, text: str) -> None:
    (number,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(number) == text.encode()
    assert canonical_json([number]) == f"[{text}]".encode()
    assert canonical_json({"n": number}) == f'{{"n":{text}}}'.encode()


def test_jcs_key_order_independence_and_no_whitespace() -> None:
    one = {"b": [1, {"y": True, "x": None}], "a": "é", "c": {"\u00e9": 1, "e": 2}}
    two = {"c": {"e": 2, "\u00e9": 1}, "a": "é", "b": [1, {"x": None, "y": True}]}
    assert canonical_json(one) == canonical_json(two)
    assert canonical_json(one) == '{"a":"é","b":[1,{"x":null,"y":true}],"c":{"e":2,"é":1}}'.encode()


def test_jcs_strings() -> None:
    # Raw UTF-8 except `"`, `\` and the C0 controls; short escapes where JSON has them.
    value = 'é\u4e2d\U0001f642/\x7f\u2028"\\\b\f\n\r\t\x00\x1f'
    expected = '"é\u4e2d\U0001f642/\x7f\u2028\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f"'
    assert canonical_json(value) == expected.encode("utf-8")
    assert canonical_json({"k": value}) == ('{"k":' + expected + "}").encode("utf-8")


def test_jcs_rejects_what_json_cannot_say() -> None:
    for bad in (float("nan"), float("inf"), "\ud800", {"k": "\udfff"}, 2**53, -(2**53)):
        with pytest.raises(rfc8785.CanonicalizationError):
            canonical_json(bad)
    assert canonical_json(2**53 - 1) == b"9007199254740991"
    assert canonical_json(-(2**53 - 1)) == b"-9007199254740991"


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_canonical_json_matches_the_reference_implementation(value: Any) -> None:
    """Whatever shortcut canonical_json takes, its bytes are the reference JCS bytes."""
    try:
        expected = bytes(rfc8785.dumps(value))
    except rfc8785.CanonicalizationError:
        with pytest.raises(rfc8785.CanonicalizationError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected
