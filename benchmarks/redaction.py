"""Redaction precision and recall on the corpus, and throughput.

First the corpus of tests/fixtures/redaction (`secret_corpus.py`): benign instruction and
documentation prose (every finding there is a false positive) and generated secrets in many
formats and contexts (each must be replaced exactly, with its kind). It prints the counts:
findings, false positives, misses, inexact spans, extra findings, then precision and
recall.
tests/test_redaction_corpus.py asserts the same counts.

Then throughput. Four corpora, each cut into 64 KiB documents (the per-source bound) and
redacted one document per call, as discovery does:

- prose: synthetic AGENTS.md-style text with headings, lists, inline code, code fences, URLs,
  commit SHAs, UUIDs, digests, and the words token/key/password/secret, but no secrets;
- secrets: the same prose with a generated (never valid) credential about every 2 KiB;
- near-miss: tests/corpus/redaction/clean repeated; every line is a placeholder or reference
  next to a keyword, so it is the slow path for the assignment rule (a stress case, not a
  typical file);
- corpus: the redaction corpus above (prose and secret cases) repeated.

Prints the median MB/s (UTF-8 megabytes per second) over the repetitions, with min and max, by
wall clock and by process CPU time (the steadier figure on a shared machine).

Usage: python benchmarks/redaction.py [--size-mb 4] [--repeat 15] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.fixtures

from rutter_core.discovery.redaction import find_secrets, redact
from rutter_core.discovery.redaction.anchors import pivots
from tests.fixtures.redaction import secret_corpus

DOC_BYTES = 64 * 1024
ALNUM = string.ascii_letters + string.digits
CLEAN = Path(__file__).resolve().parent.parent / "tests" / "corpus" / "redaction" / "clean"

SENTENCES = [
    "Run `make check` before you propose a change; it must pass on a clean checkout.",
    "Keep commits small and focused: one logical change per commit, with a clear message.",
    "The parser must never allocate per byte; benchmark with `go test -bench Parse` first.",
    "Secrets are injected by CI; never paste a token or a password into a file.",
    "The API key header is documented in docs/api.md, and keys rotate every 90 days.",
    "See https://docs.example.com/guide/setup?version=3#install for the full setup.",
    "Prefer composition over inheritance in the service layer; keep handlers thin.",
    "Error messages are lowercase and do not end with punctuation.",
    "Ask before running database migrations against staging or production.",
    "The token budget per tool call is 8000 tokens; summarize long logs instead.",
    "Use the secret store for credentials; the secret name is the service name.",
    "Tests are table-driven; every bug fix adds a test that fails before the fix.",
    "Clone with git@github.com:acme/platform.git and work on a feature branch.",
    "Dependencies are pinned in uv.lock; update them with `uv lock --upgrade-package NAME`.",
]
CODE = [
    "```python\nimport os\n\npassword = os.environ['DB_PASSWORD']\n"
    "client = Client(api_key=settings.API_KEY)\n```",
    '```go\nfunc open(cfg Config) (*sql.DB, error) {\n\ttoken := os.Getenv("TOKEN")\n'
    '\treturn sql.Open("postgres", cfg.DSN)\n}\n```',
    "```sh\nuv run pytest -q\ngo test ./... -count=1\ncurl -sS https://api.example.com:8443/v1/health\n```",
    "```yaml\ndatabase:\n  host: db.internal\n  password: ${DB_PASSWORD}\n  pool_size: 10\n```",
]


def hexstr(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def prose_line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        return f"## {rng.choice(['Workflow', 'Testing', 'Style', 'Security', 'Releases'])}\n"
    if roll < 0.10:
        return rng.choice(CODE) + "\n"
    if roll < 0.18:
        return f"- Commit {hexstr(rng, 40)} fixed the race; digest sha256:{hexstr(rng, 64)}.\n"
    if roll < 0.22:
        uuid = "-".join(hexstr(rng, n) for n in (8, 4, 4, 4, 12))
        return f"- Incident {uuid} is the reference for retries.\n"
    return "- " + " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(1, 3))) + "\n"


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def secret_line(rng: random.Random) -> str:
    makers: list[Callable[[], str]] = [
        lambda: f"- The bot uses ghp_{rand(rng, ALNUM, 36)} for releases.\n",
        lambda: f"export OPENAI_API_KEY=sk-proj-{rand(rng, ALNUM, 40)}Ab1{rand(rng, ALNUM, 100)}\n",
        lambda: (
            f"aws_access_key_id = AKIA{rand(rng, string.ascii_uppercase + string.digits, 16)}\n"
        ),
        lambda: f"password: {rand(rng, ALNUM, 14)}9\n",
        lambda: f"DATABASE_URL=postgres://app:{rand(rng, ALNUM, 16)}@db.internal:5432/app\n",
        lambda: "//registry.npmjs.org/:_authToken=" + f"npm_{rand(rng, ALNUM, 36)}\n",
    ]
    return rng.choice(makers)()


def build(size: int, rng: random.Random, *, secret_every: int = 0) -> list[str]:
    lines: list[str] = []
    total = since_secret = 0
    while total < size:
        line = prose_line(rng)
        if secret_every and since_secret >= secret_every:
            line, since_secret = secret_line(rng), 0
        lines.append(line)
        total += len(line.encode())
        since_secret += len(line.encode())
    return split_docs("".join(lines))


def split_docs(text: str) -> list[str]:
    docs: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        if size + len(line.encode()) > DOC_BYTES and current:
            docs.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line.encode())
    if current:
        docs.append("".join(current))
    return docs


def measure(docs: list[str], repeat: int) -> tuple[list[float], list[float], int]:
    """MB/s per repetition by wall clock and by this process's CPU time (steadier on a busy
    machine), and the number of findings."""
    total = sum(len(doc.encode()) for doc in docs)
    for doc in docs[:2]:  # warm up
        redact(doc)
    wall, cpu = [], []
    findings = 0
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        findings = sum(len(redact(doc).findings) for doc in docs)
        wall.append(total / (time.perf_counter() - started) / 1e6)
        cpu.append(total / max(time.process_time() - started_cpu, 1e-9) / 1e6)
    return wall, cpu, findings


def report_corpus() -> None:
    started = time.perf_counter()
    pivots.cache_clear()
    pivots()
    built = time.perf_counter() - started
    score = secret_corpus.score(find_secrets)
    print(
        f"prose: {score.prose_documents} documents, {score.prose_lines} lines, "
        f"{score.false_positives} findings (false positives)"
    )
    print(
        f"secrets: {score.cases} cases, {score.secrets} secrets: {score.found} found, "
        f"{score.missed} missed, {score.inexact} inexact, {score.extra} extra"
    )
    print(
        f"look-alikes: {score.lookalikes} cases, {score.lookalikes_flagged} with a finding "
        "(false positives)"
    )
    print(f"precision {score.precision:.4f}, recall {score.recall:.4f}")
    for note in score.notes:
        print(f"  {note}")
    print(f"rule table built in {built * 1000:.1f} ms (first use in a process)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size-mb", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    size = int(args.size_mb * 1e6)
    report_corpus()
    near_miss = "".join(path.read_text(encoding="utf-8") for path in sorted(CLEAN.glob("*.md")))
    corpus_text = "".join(text for _name, text in secret_corpus.prose_documents())
    corpus_text += "".join(case.text for case in secret_corpus.secret_cases())
    corpora = {
        "prose": build(size, random.Random(args.seed)),
        "secrets": build(size, random.Random(args.seed), secret_every=2048),
        "near-miss": split_docs(near_miss * max(1, size // max(1, len(near_miss.encode())))),
        "corpus": split_docs(corpus_text * max(1, size // max(1, len(corpus_text.encode())))),
    }
    print(f"{'corpus':<10} {'MB':>6} {'docs':>5} {'findings':>8}  MB/s median (min..max)")
    for name, docs in corpora.items():
        wall, cpu, findings = measure(docs, args.repeat)
        megabytes = sum(len(doc.encode()) for doc in docs) / 1e6
        print(
            f"{name:<10} {megabytes:6.2f} {len(docs):5d} {findings:8d}  "
            f"wall {statistics.median(wall):6.1f} ({min(wall):.1f}..{max(wall):.1f})  "
            f"cpu {statistics.median(cpu):6.1f} ({min(cpu):.1f}..{max(cpu):.1f})"
        )


if __name__ == "__main__":
    main()
