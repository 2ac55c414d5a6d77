"""How far the token estimator (`bytes_and_script.v1`) is from real tokenizers' counts.

rutter ships no tokenizer (see `rutter_core.assembly.tokens`); this measures the estimate
against one that works offline because it ships its vocabularies (quicktok: OpenAI's cl100k
and o200k, Llama 3, Qwen 3), installed apart from the project, e.g.

    python -m venv /tmp/tok && /tmp/tok/bin/pip install quicktok-v1
    .venv/bin/python benchmarks/estimator_error.py --site /tmp/tok/lib/python3.11/site-packages \\
        docs/*.md core/rutter_core/assembly/*.py /path/to/chinese.md

Each file is cut into chunks of about `--chunk` characters at line ends (memory- and pin-sized
texts); per encoding and per kind of text (mostly ASCII, mostly CJK, mixed) it prints how many
chunks, the median and the extremes of estimate / real count, and the share of chunks the
estimate undercounts (a budget filled by the estimate would be overrun there).

Usage: python benchmarks/estimator_error.py [--site DIR] [--chunk 800] FILE...
"""

from __future__ import annotations

import argparse
import importlib
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from rutter_core.assembly.tokens import ESTIMATOR

ENCODINGS = ("cl100k_base", "o200k_base", "llama3", "qwen3")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


def chunks(text: str, size: int) -> list[str]:
    found, current = [], ""
    for line in text.splitlines(keepends=True):
        current += line
        if len(current) >= size:
            found.append(current)
            current = ""
    if current.strip():
        found.append(current)
    return found


def kind(text: str) -> str:
    share = len(_CJK.findall(text)) / max(1, len(text))
    if share > 0.3:
        return "CJK"
    return "ASCII" if text.isascii() or share == 0 else "mixed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", help="a site-packages directory holding quicktok")
    parser.add_argument("--chunk", type=int, default=800)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    if args.site:
        sys.path.append(args.site)
    try:
        quicktok: Any = importlib.import_module("quicktok")
    except ImportError:
        print("quicktok is not importable: nothing to measure against (see the docstring)")
        return
    texts = [
        piece
        for name in args.files
        for piece in chunks(Path(name).read_text(encoding="utf-8"), args.chunk)
    ]
    print(f"{len(texts)} chunks of about {args.chunk} characters from {len(args.files)} files")
    print(f"{'encoding':<11} {'text':<6} {'chunks':>6} {'median':>7} {'min':>6} {'max':>6} "
          f"{'under':>6}")  # fmt: skip
    for name in ENCODINGS:
        encoding = quicktok.get_encoding(name)
        by_kind: dict[str, list[float]] = {}
        for text in texts:
            real = len(encoding.encode(text))
            if real:
                by_kind.setdefault(kind(text), []).append(ESTIMATOR.estimate(text) / real)
        for label, ratios in sorted(by_kind.items()):
            under = sum(1 for ratio in ratios if ratio < 1) / len(ratios)
            print(
                f"{name:<11} {label:<6} {len(ratios):>6} {statistics.median(ratios):>7.2f} "
                f"{min(ratios):>6.2f} {max(ratios):>6.2f} {under:>6.0%}"
            )


if __name__ == "__main__":
    main()
