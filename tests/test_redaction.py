"""The redaction engine: every kind in every context, clean corpora, decisions, properties.

Credentials are generated here at run time from seeded randomness with the right prefixes,
lengths and structure; none is real, and no file in the repository holds one (header strings a
scanner would flag are assembled from pieces).
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rutter_core.discovery.redaction import (
    REDACTION_KINDS,
    RedactionResult,
    SecretFinding,
    find_secrets,
    marker,
    redact,
)
from rutter_core.discovery.redaction.anchors import _has_anchor
from rutter_core.discovery.redaction.engine import _merge, _to_original
from tests.fixtures.redaction import secret_corpus

CORPUS = Path(__file__).parent / "corpus" / "redaction"
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
B64URL = ALNUM + "-_"
# Markers that secret scanners flag on sight are never spelled whole in this file.
PRIVATE_KEY = "PRIVATE" + " KEY"
PUTTY = "PuTTY-User-Key" + "-File-"

# -- generators --------------------------------------------------------------------------------


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random text that holds a digit, an upper and a lower case letter, like a real key."""
    while True:
        value = rand(rng, alphabet, n)
        if all(any(c in chars for c in value) for chars in (DIGITS, UPPER, LOWER)):
            return value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def gen_github_classic(rng: random.Random) -> str:
    return f"gh{rng.choice('pousr')}_" + rand(rng, ALNUM, 36)


def gen_github_fine_grained(rng: random.Random) -> str:
    return "github_pat_" + rand(rng, ALNUM, 22) + "_" + rand(rng, ALNUM, 59)


def gen_gitlab_pat(rng: random.Random) -> str:
    return "glpat-" + rand(rng, ALNUM, 20)


def gen_gitlab_routable(rng: random.Random) -> str:
    return "glpat-" + rand(rng, ALNUM, 36) + "." + rand(rng, LOWER + DIGITS, 9)


def gen_gitlab_long(rng: random.Random) -> str:
    return "gldt-" + rand(rng, ALNUM, 64)


def gen_slack_bot(rng: random.Random) -> str:
    return f"xoxb-{rand(rng, DIGITS, 12)}-{rand(rng, DIGITS, 13)}-{rand(rng, ALNUM, 24)}"


def gen_slack_user(rng: random.Random) -> str:
    parts = [rand(rng, DIGITS, 11) for _ in range(3)]
    return "xoxp-" + "-".join(parts) + "-" + rand(rng, "0123456789abcdef", 32)


def gen_slack_app(rng: random.Random) -> str:
    return f"xapp-1-A{rand(rng, UPPER + DIGITS, 10)}-{rand(rng, DIGITS, 13)}-" + rand(
        rng, "0123456789abcdef", 64
    )


def gen_slack_webhook(rng: random.Random) -> str:
    return (
        "https://hooks.slack.com/services/T"
        + rand(rng, UPPER + DIGITS, 8)
        + "/B"
        + rand(rng, UPPER + DIGITS, 8)
        + "/"
        + rand(rng, ALNUM, 24)
    )


def gen_stripe_live(rng: random.Random) -> str:
    return "sk_live_" + rand(rng, ALNUM, 99)


def gen_stripe_restricted(rng: random.Random) -> str:
    return "rk_live_" + rand(rng, ALNUM, 24)


def gen_stripe_test(rng: random.Random) -> str:
    return "sk_test_" + rand(rng, ALNUM, 24)


def gen_stripe_webhook(rng: random.Random) -> str:
    return "whsec_" + rand(rng, ALNUM, 32)


def gen_openai_project(rng: random.Random) -> str:
    return "sk-proj-" + mixed(rng, B64URL, 156)


def gen_openai_legacy(rng: random.Random) -> str:
    return "sk-" + rand(rng, ALNUM, 20) + "T3BlbkFJ" + rand(rng, ALNUM, 20)


def gen_openai_bare(rng: random.Random) -> str:
    return "sk-" + mixed(rng, ALNUM, 48)


def gen_anthropic(rng: random.Random) -> str:
    return "sk-ant-api03-" + rand(rng, B64URL, 93) + "AA"


def gen_google(rng: random.Random) -> str:
    return "AIza" + rand(rng, B64URL, 35)


def gen_npm(rng: random.Random) -> str:
    return "npm_" + rand(rng, ALNUM, 36)


def gen_pypi(rng: random.Random) -> str:
    return "pypi-AgEIcHlwaS5vcmc" + rand(rng, B64URL, 120)


def gen_jwt(rng: random.Random) -> str:
    header = {"alg": "HS256", "typ": "JWT"}
    payload = {"sub": rand(rng, DIGITS, 10), "name": rand(rng, LOWER, 8), "iat": 1_700_000_000}
    signature = bytes(rng.randrange(256) for _ in range(32))
    parts = (json.dumps(header).encode(), json.dumps(payload).encode(), signature)
    return ".".join(b64url(part) for part in parts)


def gen_aws_access(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + rand(rng, UPPER + DIGITS, 16)


def gen_aws_secret(rng: random.Random) -> str:
    return mixed(rng, ALNUM + "/+", 40)


def gen_password(rng: random.Random) -> str:
    """A literal password: starts `X9`, ends in a digit, so no placeholder rule can claim it."""
    return rng.choice(UPPER) + rng.choice(DIGITS) + rand(rng, ALNUM + "!%^*-_", 12) + "7"


def pem(rng: random.Random, label: str = "RSA ", lines: int = 6, newline: str = "\n") -> str:
    body = [rand(rng, ALNUM + "+/", 64) for _ in range(lines)] + [rand(rng, ALNUM, 20) + "=="]
    return newline.join(
        [f"-----BEGIN {label}{PRIVATE_KEY}-----", *body, f"-----END {label}{PRIVATE_KEY}-----"]
    )


def gen_private_key(rng: random.Random) -> str:
    return pem(rng)


# kind -> named variants; the first variant fills template slots
VARIANTS: dict[str, dict[str, Callable[[random.Random], str]]] = {
    "github_token": {"classic": gen_github_classic, "fine_grained": gen_github_fine_grained},
    "gitlab_token": {
        "pat": gen_gitlab_pat,
        "routable": gen_gitlab_routable,
        "deploy_long": gen_gitlab_long,
    },
    "slack_token": {"bot": gen_slack_bot, "user": gen_slack_user, "app": gen_slack_app},
    "stripe_key": {
        "live": gen_stripe_live,
        "restricted": gen_stripe_restricted,
        "test": gen_stripe_test,
        "webhook_secret": gen_stripe_webhook,
    },
    "openai_api_key": {
        "project": gen_openai_project,
        "legacy": gen_openai_legacy,
        "bare": gen_openai_bare,
    },
    "anthropic_api_key": {"api03": gen_anthropic},
    "google_api_key": {"aiza": gen_google},
    "npm_token": {"npm_": gen_npm},
    "pypi_token": {"pypi_org": gen_pypi},
    "jwt": {"hs256": gen_jwt},
    "aws_access_key": {"akia_asia": gen_aws_access},
}

TOKEN_CONTEXTS = {
    "prose": "Use {s} for the deploy bot; rotate it monthly.\n",
    "markdown_fence": "Run:\n\n```bash\ncurl -H 'X-Auth: {s}' https://api.example.com/v1\n```\n",
    "yaml": "deploy:\n  token: {s}\n  region: eu-west-1\n",
    "json": '{"name": "ci", "token": "{s}", "ttl": 3600}\n',
    "dotenv": "APP_ENV=prod\nSERVICE_TOKEN={s}\nLOG_LEVEL=info\n",
    "shell_export": 'export SERVICE_TOKEN="{s}"\nmake deploy\n',
    "url": "https://example.com/callback?token={s}&state=xyz\n",
}

CONTEXT_CASES: dict[str, tuple[Callable[[random.Random], str], dict[str, str]]] = {
    "slack_token/webhook": (
        gen_slack_webhook,
        {
            "prose": "Alerts post to {s} from the pager job.\n",
            "markdown_fence": "```sh\ncurl -X POST -d @payload.json {s}\n```\n",
            "yaml": "alerts:\n  webhook: {s}\n",
            "json": '{"webhook_url": "{s}"}\n',
            "dotenv": "SLACK_WEBHOOK_URL={s}\n",
            "shell_export": "export SLACK_WEBHOOK_URL='{s}'\n",
            "url": "https://relay.example.com/forward?to={s}\n",
        },
    ),
    "basic_auth_url/password": (
        lambda rng: mixed(rng, ALNUM, 16),
        {
            "prose": "Clone https://deploy:{s}@git.example.com/org/repo.git first.\n",
            "markdown_fence": "```sh\ngit remote add ci https://ci-bot:{s}@git.example.com/a.git\n```\n",
            "yaml": "db:\n  url: postgres://app:{s}@db.example.com:5432/app\n",
            "json": '{"broker": "amqp://guest:{s}@mq.internal:5672/"}\n',
            "dotenv": "DATABASE_URL=postgres://app:{s}@db.internal:5432/app\n",
            "shell_export": 'export REDIS_URL="redis://:{s}@cache.internal:6379/0"\n',
            "url": "https://proxy.example.com/?next=https://u:{s}@h.example.com/\n",
        },
    ),
    "secret_assignment/literal": (
        gen_password,
        {
            "prose": "Log in with password={s} on staging.\n",
            "markdown_fence": '```python\nclient_secret = "{s}"\n```\n',
            "yaml": "smtp:\n  password: {s}\n  port: 587\n",
            "json": '{"user": "ci", "api_key": "{s}"}\n',
            "dotenv": "DB_PASSWORD={s}\n",
            "shell_export": "export API_TOKEN='{s}'\n",
            "url": "https://api.example.com/v1/items?access_token={s}&page=2\n",
        },
    ),
    "aws_secret_key/credentials": (
        gen_aws_secret,
        {
            "prose": "Put aws_secret_access_key={s} into the profile.\n",
            "markdown_fence": "```ini\n[default]\naws_secret_access_key = {s}\n```\n",
            "yaml": "aws:\n  secret_access_key: {s}\n",
            "json": '{"AccessKeyId": "x", "SecretAccessKey": "{s}"}\n',
            "dotenv": "AWS_SECRET_ACCESS_KEY={s}\n",
            "shell_export": 'export AWS_SECRET_ACCESS_KEY="{s}"\n',
            "url": "https://signer.example.com/?aws_secret_key={s}&region=eu\n",
        },
    ),
    "npm_token/npmrc": (
        gen_npm,
        {
            "prose": "The publish token is {s} (revoked).\n",
            "markdown_fence": "```ini\n//registry.npmjs.org/:_authToken={s}\n```\n",
            "yaml": "npm:\n  token: {s}\n",
            "json": '{"npmAuthToken": "{s}"}\n',
            "dotenv": "NPM_TOKEN={s}\n",
            "shell_export": "export NPM_TOKEN={s}\n",
            "url": "https://registry.example.com/?token={s}\n",
        },
    ),
}
for _kind, _variants in VARIANTS.items():
    for _name, _gen in _variants.items():
        CONTEXT_CASES[f"{_kind}/{_name}"] = (_gen, TOKEN_CONTEXTS)

PEM_CONTEXTS = {
    "prose": "Old deploy key, kept for reference:\n\n{s}\n\nIt was rotated in May.\n",
    "markdown_fence": "```\n{s}\n```\n",
    "yaml_block": "signing:\n  key: |\n    {s}\n",
    "json_escaped": '{"type": "service_account", "private_key": "{s}\\n", "client_id": "1"}\n',
    "dotenv_quoted": 'SIGNING_KEY="{s}"\n',
    "shell_heredoc": "cat > key.pem <<'EOF'\n{s}\nEOF\n",
}
PEM_LABELS = ["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""]


def fill(template: str, secret: str) -> tuple[str, int]:
    assert template.count("{s}") == 1
    return template.replace("{s}", secret), template.index("{s}")


def assert_single(doc: str, kind: str, start: int, secret: str) -> None:
    assert find_secrets(doc) == [SecretFinding(kind, start, start + len(secret))]
    result = redact(doc)
    assert result.text == doc[:start] + marker(kind) + doc[start + len(secret) :]
    assert secret not in result.text
    assert result.redacted
    assert result.counts() == [(kind, 1)]


# -- every kind in every context ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "context"),
    [(case, context) for case, (_gen, contexts) in CONTEXT_CASES.items() for context in contexts],
)
def test_kind_found_in_context(case: str, context: str) -> None:
    generate, contexts = CONTEXT_CASES[case]
    secret = generate(random.Random(f"{case}/{context}"))
    doc, start = fill(contexts[context], secret)
    assert_single(doc, case.partition("/")[0], start, secret)


@pytest.mark.parametrize("label", PEM_LABELS)
@pytest.mark.parametrize("context", list(PEM_CONTEXTS))
def test_private_key_block_in_context(label: str, context: str) -> None:
    rng = random.Random(f"{label}/{context}")
    if context == "yaml_block":
        key = pem(rng, label).replace("\n", "\n    ")
    elif context in ("json_escaped", "dotenv_quoted"):
        key = pem(rng, label, newline="\\n")
    else:
        key = pem(rng, label)
    doc, start = fill(PEM_CONTEXTS[context], key)
    assert_single(doc, "private_key", start, key)


def test_every_kind_is_exercised() -> None:
    kinds = {case.partition("/")[0] for case in CONTEXT_CASES} | {"private_key"}
    corpus = {kind for case in secret_corpus.secret_cases() for kind, *_span in case.expected}
    assert kinds <= REDACTION_KINDS
    assert kinds | corpus == REDACTION_KINDS


@pytest.mark.parametrize("template", sorted((CORPUS / "templates").iterdir()), ids=lambda p: p.name)
def test_leaky_templates(template: Path) -> None:
    """Realistic files with many secrets: exactly the slots are found, with their kinds."""
    source = template.read_text(encoding="utf-8")
    rng = random.Random(template.name)
    doc, expected, cursor = "", [], 0
    for slot in re.finditer(r"@@([a-z_]+)@@", source):
        kind = slot.group(1)
        if kind == "slack_webhook":
            kind, secret = "slack_token", gen_slack_webhook(rng)
        elif kind == "basic_auth_url":
            secret = mixed(rng, ALNUM, 16)
        elif kind == "secret_assignment":
            secret = gen_password(rng)
        elif kind == "aws_secret_key":
            secret = gen_aws_secret(rng)
        elif kind == "private_key":
            secret = gen_private_key(rng)
        else:
            secret = next(iter(VARIANTS[kind].values()))(rng)
        doc += source[cursor : slot.start()]
        expected.append(SecretFinding(kind, len(doc), len(doc) + len(secret)))
        doc += secret
        cursor = slot.end()
    doc += source[cursor:]
    assert len(expected) >= 7
    assert find_secrets(doc) == expected
    result = redact(doc)
    for finding in expected:
        assert doc[finding.start : finding.end] not in result.text
    assert result.text.count("[REDACTED:") == len(expected)
    assert redact(result.text).text == result.text


# -- clean corpus ------------------------------------------------------------------------------

CLEAN = sorted((CORPUS / "clean").glob("*.md"))


def test_clean_corpus_is_substantial() -> None:
    text = "".join(path.read_text(encoding="utf-8") for path in CLEAN)
    assert len(CLEAN) >= 4
    assert re.search(r"\b[0-9a-f]{40}\b", text)  # commit SHAs
    assert re.search(r"\b[0-9a-f]{64}\b", text)  # sha256 digests
    assert re.search(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", text)  # UUIDs
    for sample in ("git@github.com:", "password: ${DB_PASSWORD}", "TOKEN=<your token>", "://"):
        assert sample in text


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.name)
def test_clean_instructions_pass_untouched(path: Path) -> None:
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    assert find_secrets(text) == []
    result = redact(text)
    assert result.text.encode("utf-8") == raw  # byte for byte
    assert not result.redacted
    assert result.counts() == []


NOT_SECRETS = [
    # hashes, ids, versions, URLs
    "commit e83c5163316f89bfbd7d9ab23ca2e25604af2900 and 9fceb02",
    "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
    "id 7d444840-9dc0-11d1-b245-5ffdce74fad2",
    "v1.4.10-rc.1 and 2024.11.0",
    "https://example.com:8443/a/b?x=1&y=two#frag",
    "git@github.com:acme/repo.git",
    "ssh://git@gitlab.example.com:2222/platform/api.git",
    "postgres://app@db.internal:5432/app",
    "http://[::1]:8080/health",
    "aGVsbG8gd29ybGQ=",
    # placeholders and references
    "password=",
    "password: ${DB_PASSWORD}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "TOKEN=$TOKEN",
    "TOKEN=<your token>",
    "api_key = os.environ['API_KEY']",
    'password = os.environ["DB_PASSWORD"]',
    "secret = settings.SECRET_KEY",
    'token := os.Getenv("TOKEN")',
    "password: '<your-password>'",
    'token: "{{ secrets.X }}"',
    "api_key: '***'",
    "password: changeme",
    "password: ********",
    "PASSWORD=xxxxxxxx",
    "api_key: YOUR_API_KEY",
    'token = "your-token-here"',
    "secret: <paste secret here>",
    "token: null",
    "secret_key = None",
    "password: true",
    "apiKey: process.env.API_KEY",
    "password: !vault |",
    "password: *default_password",
    "password = %(db_password)s",
    'token = f"{prefix}-{suffix}"',
    "password: /run/secrets/db_password",
    "private_key: ~/.ssh/id_ed25519",
    "token = sk-...",
    "token: GITHUB_TOKEN",
    'password: "DB_PASSWORD"',
    "image: ghcr.io/acme/token:v1.4.2-alpine",
    # code, not configuration
    "password: str",
    "client_secret: str = field(default='')",
    "token: Optional[str] = None",
    "password: string;",
    "login(password=pw, user=name)",
    "connect(password=user_password)",
    "  secret: clientSecret,",
    "token = token_value",
    "if password == expected:",
    "password := hashedPassword",
    'Password string `json:"password"`',
    # names that merely mention a keyword
    "max_tokens: 4096",
    "password_min_length: 12",
    "token_url: https://auth.example.com/token",
    "api_key_header = 'X-Api-Key'",
    "PASSWORD_FILE=/run/secrets/pw",
    "The token: see the vault for how to get one.",
    "Password: ask the on-call engineer",
    "Password: rotate it every 90 days",
    "tokens: 8000 per call",
    "bypass: yes",
    "host:port",
    # near-miss formats
    "ghp_tooshort",
    "xghp_" + "a" * 36,  # a masked token: one character eight times in a row
    "ghp_" + "x" * 36,
    "AKIA" + "IOSFODNN7" + "EXAMPLE",  # AWS's documented example key
    # issue 11: real prose that was redacted
    "permissions:\n  contents: read\n  id-token: write\n",
    "`id-token: write`",
    "  apiKey: process.env.SUPPORT_API_KEY!,",
    "Pass it with `api_key=`. Custom providers must also set `base_url=`.",
    "Tune it with `token_threshold=` or by supplying `message_count_threshold`.",
    "OpenAIProvider(base_url=url, api_key='not-needed')",
    'if (token === undefined) throw new Error("token: missing");',
    # every exemption docs/file-conventions.md lists, one by one
    'password = "#{db_password}"',
    "api_key: ••••••••",
    "password: &default_pw hunter",
    "token: my-github-token",
    "api_key: insert your key",
    "secret: add-yours",
    "password: replace_me",
    "token: not-set",
    "api_key: sk-no-key-required",
    "password: demo",
    "existingSecret: api-auth",
    "image_pull_secret: ghcr-pull",
    '"NextToken": "eyJwYWdlIjogMn0="',
    '"ClientToken": "a1b2c3d4e5f6a7b8"',
    "See :token:`value_name` for the grammar.",
    '"encryptionKey": "arn:aws:kms:us-west-2:123456789012:alias/aws/s3"',
    '"IdToken": "minutes"',
    '"token": "[Pagination token]"',
    '"id_token": "HEADER.PAYLOAD.SIGNATURE"',
    "const password = 'Password used to generate key';",
    "new URL('https://abc:xyz@example.com')",
    "npm:lodash@4.17.21 and team:platform@example.com",
    "notificationEmail:john.doe@example.com",
    "AKIA" + "A" * 15,
    "sk-learn-compatible-estimators-are-great",
    "sk-" + "a" * 48,
    "pk_live_" + "a1B2" * 6,
    "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln",
    "eyJub3QganNvbg.eyJzdWIiOiIxIn0.c2ln",
    "-----BEGIN " + PRIVATE_KEY + "----- blocks must never be committed",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----",
    "https://user:" + "password@example.com/",
    "https://user:${PASSWORD}@example.com/",
    "https://user:****@example.com/",
    "https://user@example.com/",
    "https://user:@example.com/",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_not_a_secret(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text).text == text


# -- decisions ---------------------------------------------------------------------------------

SECRET_ASSIGNMENTS = [
    # (line, the value that must be redacted)
    ("password=hunter2hunter2", "hunter2hunter2"),
    ("its old password=hunter2-staging-2019 was rotated.", "hunter2-staging-2019"),
    ("passwd: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("DB_PASSWORD='s3cr3t pass phrase'", "s3cr3t pass phrase"),
    ('"client_secret": "Q2xpZW50U2VjcmV0"', "Q2xpZW50U2VjcmV0"),
    ("access_token: abcDEF123456ghi", "abcDEF123456ghi"),
    ("apiKey = 'k3yV4lue99'", "k3yV4lue99"),
    ("X-API-KEY: 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ('secret := "gO-s3cret"', "gO-s3cret"),
    ("'password' => 'phpS3cret'", "phpS3cret"),
    ('config["password"] = "dictS3cret"', "dictS3cret"),
    ("db_pass=pg-Pa55", "pg-Pa55"),
    ("PGPASSWORD=pgpw2024 psql -h db", "pgpw2024"),
    ("--password=cliS3cret1", "cliS3cret1"),
    ('if password == "Hardc0ded":', "Hardc0ded"),
    ("password: hunter2 # rotate monthly", "hunter2"),
    ("Server=db;Password=Conn5tr1ng;Database=app", "Conn5tr1ng"),
    ("https://api.example.com/x?api_key=Qu3ryK3y&page=1", "Qu3ryK3y"),
    ("login(password='kwargS3cret')", "kwargS3cret"),
    ("password = Xk9vQ2mP7rT4wZ8y", "Xk9vQ2mP7rT4wZ8y"),
    ("export GITHUB_TOKEN=4f2a9c1e77b0", "4f2a9c1e77b0"),
    ("aws_secret_access_key = e83c5163316f89bfbd7d9ab23ca2e25604af2900", None),
    ("`password: inline5ecret`", "inline5ecret"),
    ("password: hunter2\r\n", "hunter2"),
]


@pytest.mark.parametrize(("line", "value"), SECRET_ASSIGNMENTS)
def test_secret_assignment_redacts_only_the_value(line: str, value: str | None) -> None:
    if value is None:  # an all-hex value is no AWS secret key, but is still a literal
        value = line.split("= ", 1)[1]
    start = line.index(value)
    assert find_secrets(line) == [SecretFinding("secret_assignment", start, start + len(value))]
    assert redact(line).text == line.replace(value, "[REDACTED:secret_assignment]", 1)


def test_anthropic_wins_over_openai() -> None:
    key = gen_anthropic(random.Random(1))
    assert [f.kind for f in find_secrets(f"KEY={key}")] == ["anthropic_api_key"]
    assert [f.kind for f in find_secrets(f"key {key} end")] == ["anthropic_api_key"]


@pytest.mark.parametrize(
    ("prefix", "found"),
    [("sk_live_", True), ("rk_live_", True), ("sk_test_", True), ("rk_test_", True),
     ("pk_live_", False), ("pk_test_", False)],
)  # fmt: skip
def test_stripe_secret_keys_including_test_mode_but_not_publishable(
    prefix: str, found: bool
) -> None:
    key = prefix + rand(random.Random(prefix), ALNUM, 24)
    expected = [SecretFinding("stripe_key", 4, 4 + len(key))] if found else []
    assert find_secrets(f"key {key}\n") == expected


def test_openai_needs_a_random_looking_body() -> None:
    rng = random.Random(2)
    assert find_secrets("sk-" + "Ab1" * 11) != []
    assert find_secrets("sk-" + rand(rng, LOWER, 48)) == []
    assert find_secrets("sk-proj-" + "-".join(["my", "cool", "project", "name", "here"])) == []


def test_basic_auth_redacts_password_only() -> None:
    text = "clone https://alice:" + "S3cr3tPw@git.example.com:8443/org/repo.git now"
    assert redact(text).text == (
        "clone https://alice:[REDACTED:basic_auth_url]@git.example.com:8443/org/repo.git now"
    )


def test_url_password_that_is_a_token_is_reported_as_the_token() -> None:
    token = gen_github_classic(random.Random(3))
    text = f"https://x-access-token:{token}@github.com/acme/repo.git"
    start = text.index(token)
    assert find_secrets(text) == [SecretFinding("github_token", start, start + len(token))]


def test_format_beats_assignment_even_when_the_value_is_longer() -> None:
    jwt = gen_jwt(random.Random(4))
    text = f'token: "Bearer {jwt}"'
    start = text.index(jwt)
    assert find_secrets(text) == [SecretFinding("jwt", start, start + len(jwt))]
    assert redact(redact(text).text).text == redact(text).text


def test_aws_secret_needs_an_aws_name_and_a_non_hex_value() -> None:
    secret = gen_aws_secret(random.Random(5))
    assert [f.kind for f in find_secrets(f"aws_secret_access_key={secret}")] == ["aws_secret_key"]
    assert [f.kind for f in find_secrets(f"unrelated={secret}")] == []
    assert [f.kind for f in find_secrets(f"my_secret={secret}")] == ["secret_assignment"]


def test_npm_legacy_uuid_token_only_after_auth_token() -> None:
    uuid = "0b9e8f3c-2d4a-4f6e-9a1b-3c5d7e9f1a2b"
    text = f"//registry.npmjs.org/:_authToken={uuid}\n"
    start = text.index(uuid)
    assert find_secrets(text) == [SecretFinding("npm_token", start, start + 36)]
    assert find_secrets(f"run {uuid} passed") == []


def test_truncated_private_key_redacts_header_and_body() -> None:
    block = pem(random.Random(6))
    truncated = block.rsplit("\n", 2)[0]  # drop the last body line and the END line
    text = f"Key:\n{truncated}\n\nMore prose.\n"
    start = text.index("-----BEGIN")
    assert find_secrets(text) == [SecretFinding("private_key", start, start + len(truncated))]
    assert redact(text).text == "Key:\n[REDACTED:private_key]\n\nMore prose.\n"


def test_truncated_escaped_private_key_in_json() -> None:
    block = pem(random.Random(18), newline="\\n")
    truncated = block.rsplit("\\n", 2)[0]
    text = f'{{"private_key": "{truncated}\\n'
    start = text.index("-----BEGIN")
    assert find_secrets(text) == [SecretFinding("private_key", start, start + len(truncated))]


def test_private_key_mismatched_end_keeps_the_end_line() -> None:
    block = pem(random.Random(7), "RSA ").replace(f"END RSA {PRIVATE_KEY}", f"END {PRIVATE_KEY}")
    result = redact(block)
    assert result.text == f"[REDACTED:private_key]\n-----END {PRIVATE_KEY}-----"


def test_begin_and_end_lines_far_apart_in_prose_are_no_block() -> None:
    text = (
        f"A key file starts with `-----BEGIN RSA {PRIVATE_KEY}-----`.\n\nNever commit one; "
        f"rotate it instead.\n\nIt ends with `-----END RSA {PRIVATE_KEY}-----`.\n"
    )
    assert find_secrets(text) == []


def test_single_line_key_block() -> None:
    body = rand(random.Random(17), ALNUM, 120)
    block = f"-----BEGIN {PRIVATE_KEY}-----{body}-----END {PRIVATE_KEY}-----"
    assert find_secrets(f"k={block}") == [SecretFinding("private_key", 2, 2 + len(block))]


def test_two_adjacent_key_blocks_are_two_findings() -> None:
    rng = random.Random(8)
    first, second = pem(rng, "EC "), pem(rng, "OPENSSH ")
    text = f"{first}\n{second}\n"
    assert find_secrets(text) == [
        SecretFinding("private_key", 0, len(first)),
        SecretFinding("private_key", len(first) + 1, len(first) + 1 + len(second)),
    ]


def test_pgp_ssh2_and_putty_keys() -> None:
    rng = random.Random(9)
    body = "\n".join(rand(rng, ALNUM, 64) for _ in range(3))
    pgp = f"PGP {PRIVATE_KEY} BLOCK"
    pgp = f"-----BEGIN {pgp}-----\n\n{body}\n=AbCd\n-----END {pgp}-----"
    ssh2 = f"SSH2 ENCRYPTED {PRIVATE_KEY}"
    ssh2 = f'---- BEGIN {ssh2} ----\nComment: "k"\n{body}\n---- END {ssh2} ----'
    mac = rand(rng, "0123456789abcdef", 64)
    putty = (
        f"{PUTTY}3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"
        f"{body}\nPrivate-Lines: 1\n{rand(rng, ALNUM, 44)}\nPrivate-MAC: {mac}"
    )
    for block in (pgp, ssh2, putty):
        text = f"before\n{block}\nafter\n"
        assert find_secrets(text) == [SecretFinding("private_key", 7, 7 + len(block))], block[:20]


def test_jwt_requires_three_segments_and_json() -> None:
    jwt = gen_jwt(random.Random(10))
    header, payload, _signature = jwt.split(".")
    assert find_secrets(f"{header}.{payload}") == []
    assert find_secrets(jwt) == [SecretFinding("jwt", 0, len(jwt))]


def test_distinctive_token_glued_to_a_word_is_still_that_token() -> None:
    """Issue 18: `ghp_` cannot occur in prose, so a token glued to a word is found."""
    token = gen_github_classic(random.Random(11))
    assert find_secrets("x" + token) == [SecretFinding("github_token", 1, 41)]
    assert find_secrets(token + "x") == [SecretFinding("github_token", 0, 40)]
    assert find_secrets(f"({token})") == [SecretFinding("github_token", 1, 41)]


def test_weak_prefix_inside_a_longer_word_is_not_that_token() -> None:
    rng = random.Random(19)
    npm, aws = gen_npm(rng), "AKIA" + rand(rng, UPPER + DIGITS, 16)
    assert find_secrets("x" + npm) == []
    assert find_secrets(npm + "x") == []
    assert find_secrets("X" + aws) == []  # inside an upper-case run
    assert find_secrets("key" + aws) == [SecretFinding("aws_access_key", 3, 23)]


def test_offsets_are_str_offsets_with_non_ascii_text() -> None:
    token = gen_npm(random.Random(12))
    text = f"İstanbul ünïcödé 密钥\uff1a{token}\uff1bpassword: hünter2x\n"  # fullwidth : and ;
    findings = find_secrets(text)
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [
        ("npm_token", token),
        ("secret_assignment", "hünter2x"),
    ]


def test_lone_surrogates_do_not_break_the_scan() -> None:
    text = "\udcff password=Surr0gate99 \udcfe"
    assert redact(text).text == "\udcff password=[REDACTED:secret_assignment] \udcfe"


def test_several_secrets_counts_by_kind() -> None:
    rng = random.Random(13)
    a, b, c = gen_github_classic(rng), gen_github_classic(rng), gen_npm(rng)
    result = redact(f"{a} {c} {b} password=Passw0rd99")
    assert result.counts() == [("github_token", 2), ("npm_token", 1), ("secret_assignment", 1)]
    assert [f.start for f in result.findings] == sorted(f.start for f in result.findings)


def test_marker_kind_names_are_not_keys() -> None:
    token = gen_github_classic(random.Random(15))
    text = f"{token}: Abcd1234x"
    assert find_secrets(text) == [SecretFinding("github_token", 0, 40)]
    assert find_secrets("[REDACTED:github_token]: Abcd1234x") == []


def test_secret_freed_by_a_neighbouring_redaction_is_found() -> None:
    """A token glued to a key header only stands free once the key is a marker."""
    rng = random.Random(16)
    token = gen_github_classic(rng)
    key = f"{PUTTY}2: ssh-rsa\nPrivate-Lines: 1\n{rand(rng, ALNUM, 44)}"
    key += "\nPrivate-MAC: " + rand(rng, "0123456789abcdef", 40)
    text = f"x {token}{key}\ny"
    assert find_secrets(text) == [
        SecretFinding("github_token", 2, 42),
        SecretFinding("private_key", 42, 42 + len(key)),
    ]
    assert redact(text).text == "x [REDACTED:github_token][REDACTED:private_key]\ny"


def test_second_pass_findings_map_back_over_markers() -> None:
    # A finding in redacted text that touches a marker stands for the whole secret behind it.
    findings = [SecretFinding("jwt", 4, 10), SecretFinding("npm_token", 20, 60)]
    # redacted: "abcd[REDACTED:jwt]efghijklmn[REDACTED:npm_token]..."; jwt marker is 14 long
    assert _to_original(findings, SecretFinding("secret_assignment", 0, 2)) == SecretFinding(
        "secret_assignment", 0, 2
    )
    assert _to_original(findings, SecretFinding("secret_assignment", 6, 20)) == SecretFinding(
        "secret_assignment", 4, 12
    )
    assert _to_original(findings, SecretFinding("secret_assignment", 20, 30)) == SecretFinding(
        "secret_assignment", 12, 60
    )
    overlapping = [SecretFinding("jwt", 0, 10), SecretFinding("npm_token", 5, 30)]
    assert _merge(overlapping) == [SecretFinding("npm_token", 0, 30)]


# -- API ---------------------------------------------------------------------------------------


def test_api_shapes() -> None:
    assert {
        "private_key", "aws_access_key", "aws_secret_key", "github_token", "gitlab_token",
        "slack_token", "stripe_key", "openai_api_key", "anthropic_api_key", "google_api_key",
        "npm_token", "pypi_token", "jwt", "basic_auth_url", "secret_assignment",
        "google_oauth", "sendgrid_key", "twilio_key", "huggingface_token", "mailgun_key",
        "mailchimp_key", "shopify_token", "digitalocean_token", "telegram_bot_token",
        "discord_token", "square_token", "databricks_token", "atlassian_token", "api_token",
        "basic_auth", "bearer_token", "login_password", "azure_sas",
    } == REDACTION_KINDS  # fmt: skip
    assert marker("github_token") == "[REDACTED:github_token]"
    with pytest.raises(ValueError, match="unknown redaction kind"):
        marker("nope")
    empty = redact("")
    assert empty == RedactionResult("", ())
    assert not empty.redacted
    finding = SecretFinding("jwt", 1, 2)
    with pytest.raises(FrozenInstanceError):
        finding.start = 5  # type: ignore[misc]


def test_redacted_text_is_stable() -> None:
    rng = random.Random(14)
    text = (
        f"a {gen_slack_bot(rng)} b password={gen_password(rng)} c\n{gen_private_key(rng)}\n"
        f"https://u:{mixed(rng, ALNUM, 12)}@h.example.com/ {gen_jwt(rng)}"
    )
    once = redact(text)
    assert len(once.findings) == 5
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.findings == ()


# -- properties --------------------------------------------------------------------------------

GENERATORS: list[tuple[str, Callable[[random.Random], str]]] = [
    (kind, gen) for kind, variants in VARIANTS.items() for gen in variants.values()
] + [
    ("slack_token", gen_slack_webhook),
    ("private_key", gen_private_key),
]

seeds = st.integers(min_value=0, max_value=2**32)


@st.composite
def placed_secrets(draw: st.DrawFn) -> tuple[str, list[SecretFinding]]:
    """Secrets in their contexts, separated by filler that cannot form a secret."""
    filler = st.lists(
        st.sampled_from(["the", "run", "make", "tests", "a", "of", ".", ",", "!", "#", "(", ")",
                         "1", "42", "x", "é", "密", " ", "\t", "\n"]),
        max_size=12,
    ).map("".join)  # fmt: skip
    doc, expected = draw(filler), []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        choice = draw(st.integers(min_value=0, max_value=len(GENERATORS) + 1))
        rng = random.Random(draw(seeds))
        if choice < len(GENERATORS):
            kind, generate = GENERATORS[choice]
            secret = generate(rng)
            template = draw(st.sampled_from(list(TOKEN_CONTEXTS.values())))
            if kind == "private_key":
                template = "{s}\n"
        elif choice == len(GENERATORS):
            kind, secret = "secret_assignment", gen_password(rng)
            template = draw(
                st.sampled_from(list(CONTEXT_CASES["secret_assignment/literal"][1].values()))
            )
        else:
            kind, secret = "basic_auth_url", mixed(rng, ALNUM, 12)
            template = "https://deploy:{s}@git.example.com/r.git\n"
        piece, offset = fill(template, secret)
        doc += "\n"
        expected.append(SecretFinding(kind, len(doc) + offset, len(doc) + offset + len(secret)))
        doc += piece + "\n" + draw(filler)
    return doc, expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(placed_secrets())
def test_property_every_placed_secret_is_found_and_gone(
    case: tuple[str, list[SecretFinding]],
) -> None:
    doc, expected = case
    assert find_secrets(doc) == expected
    result = redact(doc)
    for finding in expected:
        assert doc[finding.start : finding.end] not in result.text
    assert redact(result.text).text == result.text


FRAGMENTS = [
    "password", "passwd", "pass", "pwd", "token", "Token", "secret", "api_key", "apiKey",
    "aws_secret_access_key", "_authToken", "key", "=", ":", ": ", " = ", ":=", "=>", "==", "\"",
    "'", "`", "[", "]", "(", ")", ",", ";", "?", "&", "#", "$", "${X}", "<x>", "@", "://",
    "https", "redis", "user", "ghp_", "github_pat_", "glpat-", "xoxb-1-", "sk-", "sk-ant-",
    "sk-proj-", "sk_live_", "AKIA", "AIza", "npm_", "pypi-AgE", "eyJ", ".", "-", "_", "\n",
    " ", "\t", "\\n", "-----BEGIN ", "-----END ", "RSA ", PRIVATE_KEY, "-----",
    PUTTY + "2: ",
    "[REDACTED:github_token]", "[REDACTED:secret_assignment]", "İ", "密", "\r\n",
    # issue 18's rules and variants
    "SG.", "hf_", "ya29.", "shpat_", "dapi", "AC", "-us1", "curl ", " -u ", "--user=",
    "machine ", " login ", " password ", "Basic ", "Bearer ", '"auth": "', "@", "localhost",
    "\u200b", "\u00ad", "\u00a0", "\uff1a", "\uff47", "\u0440", "> ", "// ", "# ",
    "[REDACTED:login_password]", "[REDACTED:basic_auth]",
]  # fmt: skip
CORPUS_GENERATORS = [generate for _kind, _variant, generate in secret_corpus.FORMATS]


@st.composite
def adversarial_texts(draw: st.DrawFn) -> str:
    """Fragments, random runs and real secrets glued together with no separators."""
    parts = []
    for _ in range(draw(st.integers(min_value=0, max_value=30))):
        pick = draw(st.integers(min_value=0, max_value=3))
        if pick == 0:
            parts.append(draw(st.sampled_from(FRAGMENTS)))
        elif pick == 1:
            parts.append(draw(st.text(alphabet=ALNUM + "+/=-_.", max_size=40)))
        elif pick == 2:
            parts.append(draw(st.text(max_size=8)))
        else:
            generate = draw(st.sampled_from([gen for _kind, gen in GENERATORS] + CORPUS_GENERATORS))
            parts.append(generate(random.Random(draw(seeds))))
    return "".join(parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(adversarial_texts())
def test_property_findings_are_sorted_disjoint_and_idempotent(text: str) -> None:
    findings = find_secrets(text)
    previous_end = 0
    for finding in findings:
        assert finding.kind in REDACTION_KINDS
        assert previous_end <= finding.start < finding.end <= len(text)
        previous_end = finding.end
    result = redact(text)
    assert result.findings == tuple(findings)
    rebuilt, cursor = "", 0
    for finding in findings:
        rebuilt += text[cursor : finding.start] + marker(finding.kind)
        cursor = finding.end
    assert result.text == rebuilt + text[cursor:]
    again = redact(result.text)
    assert again.text == result.text
    assert again.findings == ()


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ghpskAIKey_-:/J.=tokenpaswrdcT \n\"'")) | st.characters()
    )
)
def test_property_text_without_anchor_is_unchanged(text: str) -> None:
    assume(not _has_anchor(text))
    result = redact(text)
    assert result.text == text
    assert result.findings == ()
