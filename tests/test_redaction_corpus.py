"""The redaction corpus (tests/fixtures/redaction): exact counts of findings, false positives
and misses, the prose that used to be redacted (issue 11), the formats and variants that used
to leak (issue 18), and detect-secrets used without importing it."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rutter_core.discovery.fsread import FileReader
from rutter_core.discovery.redaction import find_secrets, redact, upstream
from rutter_core.discovery.redaction.normalise import normalise
from rutter_core.discovery.snapshot import Limits
from rutter_core.discovery.walk import discover
from tests.conftest import REDACTION_FIGURES, write_tree
from tests.fixtures.redaction import secret_corpus

ROOT = Path(__file__).resolve().parent.parent


def test_corpus_counts_are_exact(record_property: Callable[[str, object], None]) -> None:
    """The figures docs/performance.md records: every secret found, no false positive. They
    are printed at the end of the run (the `redaction corpus` section)."""
    score = secret_corpus.score(find_secrets)
    # Carried on the test's report, so the run's summary prints it from any worker.
    record_property(REDACTION_FIGURES, secret_corpus.summary(score))
    assert score.notes == ()
    assert (score.prose_documents, score.prose_lines, score.false_positives) == (15, 1283, 0)
    assert (score.lookalikes, score.lookalikes_flagged) == (105, 0)
    assert (score.cases, score.secrets) == (1271, 1273)
    assert (score.found, score.missed, score.inexact, score.extra) == (1273, 0, 0, 0)
    assert (score.precision, score.recall) == (1.0, 1.0)


def test_the_prose_corpus_holds_what_issue_11_reported() -> None:
    text = "".join(body for _name, body in secret_corpus.prose_documents())
    for sample in (
        "id-token: write",
        "apiKey: process.env.SUPPORT_API_KEY!,",
        "with `api_key=`. Custom",
        "supplying `message_count_threshold`",
        'os.environ["OPENAI_API_KEY"]',
        "${DB_PASSWORD}",
        "<your-api-key>",
        "API_TOKEN=xxx",
        "SECRET_KEY=changeme",
        'api_key="not-needed"',
        "| `SUPPORT_API_KEY` |",
        "AKIA" + "IOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        "ghp_…",
        "密码\uff1a",
    ):
        assert sample in text, sample
    assert text.count("\n") > 1000


def test_a_scorer_that_finds_nothing_misses_every_secret() -> None:
    """The score can fail: it counts misses and false positives, not just runs."""
    nothing = secret_corpus.score(lambda text: [])
    assert (nothing.found, nothing.missed) == (0, nothing.secrets)
    greedy = secret_corpus.score(
        lambda text: [type("F", (), {"kind": "x", "start": 0, "end": 1})()]
    )
    assert greedy.false_positives == greedy.prose_documents
    assert greedy.recall == 0.0


@pytest.mark.parametrize("case", secret_corpus.secret_cases(), ids=lambda case: case.name)
def test_every_corpus_secret_is_gone_from_the_redacted_text(case: secret_corpus.Case) -> None:
    result = redact(case.text)
    for _kind, start, end in case.expected:
        assert case.text[start:end] not in result.text
    assert redact(result.text).text == result.text


def test_password_in_a_sentence_is_found_but_not_the_sentence() -> None:
    text = "password: hunter2 is the staging DB password."
    assert redact(text).text == "password: [REDACTED:secret_assignment] is the staging DB password."
    for prose in (
        "Password: rotate it every 90 days.",
        "token: gpt4o is the model we use",  # a token's name with prose after it
        "password: see the vault, entry db2 staging.",
    ):
        assert find_secrets(prose) == [], prose


@pytest.mark.parametrize(
    "prefix", ["> ", "# ", "// ", "- ", "* ", "| ", ";", "> > ", "\t// ", "1. ", "REM ", "> 12) "]
)
def test_private_key_block_whatever_precedes_each_line(prefix: str) -> None:
    key = secret_corpus.pem(random.Random(prefix), "RSA ", prefix)
    text = f"Quoted:\n{prefix}{key}\n{prefix}\nAfter.\n"
    result = redact(text)
    assert result.text == f"Quoted:\n{prefix}[REDACTED:private_key]\n{prefix}\nAfter.\n"


def test_prose_between_begin_and_end_is_still_no_block() -> None:
    begin = "-----BEGIN RSA " + secret_corpus.PRIVATE_KEY + "-----"
    end = "-----END RSA " + secret_corpus.PRIVATE_KEY + "-----"
    text = f"> {begin}\n> Never commit one; rotate it instead.\n> {end}\n"
    assert find_secrets(text) == []


def test_documented_examples_and_masks_are_not_secrets() -> None:
    for text in (
        "AKIA" + "IOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
        secret_corpus.generated_prose(),
        "ghp_" + "x" * 36,
        "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
    ):
        assert find_secrets(text) == [], text
    # One character changed and it is a key again.
    assert [f.kind for f in find_secrets("AKIA" + "IOSFODNN7EXAMPLF")] == ["aws_access_key"]


def test_normalised_copy_maps_back_to_the_original_span() -> None:
    text = "a\u200bb\uff1ac\u00a0d"
    copy = normalise(text)
    assert copy is not None
    assert copy.text == "ab: c d"
    assert copy.original(0, 2) == (0, 3)  # `ab` covers the zero-width space between them
    assert copy.original(2, 4) == (3, 4)  # `: ` is the one fullwidth colon
    assert copy.original(4, 7) == (4, 7)
    assert normalise("plain ascii") is None
    assert normalise("密钥 only") is None


def test_a_hidden_character_is_redacted_with_the_token() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
    text = f"push with {token[:20]}\u200b{token[20:]} now"
    assert redact(text).text == "push with [REDACTED:github_token] now"


def test_upstream_patterns_are_detect_secrets_own() -> None:
    """What `upstream` reads from the plugin files equals the imported plugins' patterns."""
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.keyword import DENYLIST
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    def same(read: upstream.Source | None, real: re.Pattern[str]) -> bool:
        # A compiled str pattern carries re.UNICODE, which `re.compile` adds by default.
        return read is not None and (read.pattern, read.flags | re.UNICODE) == (
            real.pattern,
            real.flags,
        )

    for module, plugin in (
        ("github_token", GitHubTokenDetector),
        ("gitlab_token", GitLabTokenDetector),
        ("openai", OpenAIDetector),
        ("pypi_token", PypiTokenDetector),
        ("sendgrid", SendGridDetector),
        ("slack", SlackDetector),
        ("square_oauth", SquareOAuthDetector),
        ("twilio", TwilioKeyDetector),
    ):
        read = upstream.denylist(module, plugin.__name__)
        assert len(read) == len(plugin.denylist)
        assert all(same(a, b) for a, b in zip(read, plugin.denylist, strict=True)), module
    assert same(upstream.pattern("aws", "AWSKeyDetector", 0), AWSKeyDetector.denylist[0])
    assert upstream.denylist("aws", "AWSKeyDetector")[1] is None  # built with str.format
    assert upstream.keywords() == DENYLIST
    with pytest.raises(upstream.UpstreamChanged):
        upstream.denylist("aws", "NoSuchDetector")
    with pytest.raises(upstream.UpstreamChanged):
        upstream.pattern("aws", "AWSKeyDetector", 1)


def test_redaction_never_imports_detect_secrets_or_requests() -> None:
    """detect-secrets' package import pulls `requests` and its scanner (a cold-start cost)."""
    script = (
        "import sys\n"
        "from rutter_core.discovery.redaction import redact\n"
        "assert 'detect_secrets' not in sys.modules\n"
        "result = redact('use ghp_' + 'A1b2C3d4E5' * 3 + 'F6g7H8 and SG.' + 'a' * 5)\n"
        "assert result.counts() == [('github_token', 1)], result\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(loaded & {'detect_secrets', 'requests'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"


def test_benchmark_prints_the_corpus_counts() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/redaction.py", "--size-mb", "0.07", "--repeat", "1"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert "prose: 15 documents, 1283 lines, 0 findings (false positives)" in done.stdout
    assert "look-alikes: 105 cases, 0 with a finding (false positives)" in done.stdout
    assert (
        "secrets: 1271 cases, 1273 secrets: 1273 found, 0 missed, 0 inexact, 0 extra" in done.stdout
    )
    assert "precision 1.0000, recall 1.0000" in done.stdout


def test_curl_user_needs_curl_on_its_command_line() -> None:
    password = secret_corpus.password(random.Random(3))
    found = f"curl -sS \\\n  -H 'Accept: */*' \\\n  -u ci:{password} https://h.example.com\n"
    assert redact(found).text.count("[REDACTED:login_password]") == 1
    for text in (
        f"curl https://h.example.com\nssh -u ci:{password} host\n",  # another command
        f"docker run -u app:{password} image\n",
        f"run `recurl -u ci:{password}`\n",
    ):
        assert find_secrets(text) == [], text


def test_discovery_delivers_issue_18_formats_redacted_from_real_files(tmp_path: Path) -> None:
    rng = random.Random(18)
    key = secret_corpus.pem(rng, "OPENSSH ", "> ")
    token = "ghp_" + secret_corpus.rand(rng, secret_corpus.ALNUM, 36)
    hidden = token[:20] + "\u200b" + token[20:]
    sendgrid = "SG." + secret_corpus.rand(rng, secret_corpus.B64URL, 22) + "."
    sendgrid += secret_corpus.rand(rng, secret_corpus.B64URL, 43)
    password = secret_corpus.password(rng)
    text = (
        "# Deploy notes\n\n"
        "permissions:\n  id-token: write\n\n"
        f"> {key}\n\n"
        f"Mail goes through {sendgrid}; pushes use {hidden}.\n"
        f"machine api.example.com login deploy password {password}\n"
        "The AWS docs use AKIA" + "IOSFODNN7EXAMPLE.\n"
    )
    write_tree(tmp_path, {"AGENTS.md": text, "src/x.go": ""})
    snapshot = discover("demo", str(tmp_path), "src/x.go", reader=FileReader(), limits=Limits())
    [source] = snapshot.sources
    for secret in (key, token, token[:20], token[20:], sendgrid, password):
        assert secret not in source.content
    assert "id-token: write" in source.content
    assert "AKIA" + "IOSFODNN7EXAMPLE" in source.content
    assert "> [REDACTED:private_key]\n" in source.content
    assert [(item.kind, item.count) for item in source.redactions] == [
        ("github_token", 1),
        ("login_password", 1),
        ("private_key", 1),
        ("sendgrid_key", 1),
    ]


# -- issue 34 -----------------------------------------------------------------------------------

WRAPPED_KEYS = secret_corpus.wrapped_key_cases()


@pytest.mark.parametrize("case", WRAPPED_KEYS, ids=lambda case: case.name)
def test_a_wrapped_key_block_is_redacted_whole_from_header_to_footer(
    case: secret_corpus.Case,
) -> None:
    [(kind, start, end)] = case.expected
    assert [(f.kind, f.start, f.end) for f in find_secrets(case.text)] == [(kind, start, end)]
    redacted = redact(case.text).text
    assert redacted == case.text[:start] + "[REDACTED:private_key]" + case.text[end:]
    for run in re.findall(r"[A-Za-z0-9+/]{16,}", case.text[start:end]):
        assert run not in redacted  # no body line is left, whatever wraps it


def test_every_kind_of_block_is_wrapped_every_way() -> None:
    names = {case.name for case in WRAPPED_KEYS}
    for wrap in ("python-list-single", "markdown-table", "yaml-list", "backslash", "br",
                 "json-escaped", "hash-comment", "slash-comment", "quote", "tab-indent",
                 "one-line-spaces", "one-line-glued"):  # fmt: skip
        for label in ("RSA", "EC", "OPENSSH", "DSA", "ENCRYPTED", "plain", "PGP  BLOCK"):
            assert f"pem34/{wrap}/{label}" in names


@pytest.mark.parametrize("case", secret_corpus.issue34_format_cases(), ids=lambda case: case.name)
def test_formats_issue_34_found_missing_are_found(case: secret_corpus.Case) -> None:
    assert [(f.kind, f.start, f.end) for f in find_secrets(case.text)] == list(case.expected)


@pytest.mark.parametrize(
    ("name", "text"),
    secret_corpus.lookalike_cases(),
    ids=[n for n, _ in secret_corpus.lookalike_cases()],
)
def test_look_alikes_are_left_alone(name: str, text: str) -> None:
    assert find_secrets(text) == [], name


def test_issue_34_examples_exactly() -> None:
    """The cases as the issue reported them."""
    assert redact("[client]\npassword = S3cretPass\n").text == (
        "[client]\npassword = [REDACTED:secret_assignment]\n"
    )
    assert redact("mysql -u root -pS3cretPass app").text == (
        "mysql -u root -p[REDACTED:login_password] app"
    )
    assert redact("<password>S3cretPass</password>").text == (
        "<password>[REDACTED:secret_assignment]</password>"
    )
    for text in ("token: v2.3.1-rc4", "secret: db-credentials", "password: ${DB_PASSWORD}"):
        assert find_secrets(text) == [], text


PATHOLOGICAL = {
    "headers-without-end": "-----BEGIN RSA " + secret_corpus.PRIVATE_KEY + "-----\n",
    "header-then-noise": None,  # one header, then a megabyte of wrapper characters
    "wrapped-short-words": "'ab',\n",
    "br-runs": "<br><b",
    "backslashes": "\\\\n\\",
    "dashes": "---- END -----END ",
    "ini-sections": "[client]\npassword = x\n",
    "xml-open-tags": "<password>",
    "xml-blank-text": "<password>" + " " * 2000 + "\n",
    "mysql-values": "mysql -pabcd1 ",
    "ini-long-lines": "k=" + "v" * 4000 + "\npassword = x\n",
    "sas-params": "?sig=" + "Ab1+" * 6 + "&",
    "mysql-options": "mysql -p -p -p ",
    "npm-auth": "_auth=_auth=",
    "armor-headers": "Comment: a b c d e f g h i j k l m n o p q r s t u v w x y z\n",
}


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_a_pathological_megabyte_is_scanned(name: str) -> None:
    """Work per anchor is bounded: each of these 1 MB inputs repeats what a rule would try
    to extend (it finishes; a rule that backtracked across the text would not)."""
    unit = PATHOLOGICAL[name]
    if unit is None:
        head = "-----BEGIN RSA " + secret_corpus.PRIVATE_KEY + "-----\n"
        text = head + "'', | # // > \\\n" * (1_000_000 // 16)
    else:
        text = unit * (1_000_000 // len(unit))
    if name == "armor-headers":
        text = "-----BEGIN RSA " + secret_corpus.PRIVATE_KEY + "-----\n" + text
    findings = find_secrets(text)
    assert all(f.start < f.end <= len(text) for f in findings)
