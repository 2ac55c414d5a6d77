"""Secret redaction: the one engine every surface uses (contract section 8).

`redact(text)` replaces each secret with `[REDACTED:<kind>]` and reports exact spans. Patterns
come from detect-secrets where its plugin fits span-level work (AWS access keys, classic GitHub
tokens, GitLab, Slack, PyPI, legacy OpenAI keys, its JWT validity check); our own rules cover
what it lacks or reports only per line (fine-grained GitHub tokens, current Stripe/OpenAI/
Anthropic/Google/npm formats, whole private-key blocks, the password inside a URL, the literal
value of a `password=` / `token:` assignment). No entropy detectors: hashes, UUIDs and base64 in
ordinary text are left alone.

Matching rules and decisions (kinds are `REDACTION_KINDS`):

- private_key: the whole `-----BEGIN <label>PRIVATE KEY-----` ... matching `-----END ...-----`
  block (any label: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK, none; SSH2 `---- BEGIN`),
  also with `\\n` escapes inside a JSON string. Without an END line, the header plus the
  base64 body lines after it; a header with no body is prose and stays. PuTTY `.ppk` blocks.
- aws_access_key: AKIA/ASIA/ABIA/ACCA/A3T + 16 (detect-secrets), not inside a longer word.
- aws_secret_key: a 40-character base64 value assigned to an `aws...key/secret/token` or
  `...secret_access_key` name; an all-hex value (a commit SHA) is not one.
- github_token: gh[pousr]_ + 36 (detect-secrets), `github_pat_` + 22..255.
- gitlab_token: detect-secrets' gl*- prefixes plus 20..300-character and routable tokens.
- slack_token: xox[abposr]- tokens and hooks.slack.com webhook URLs (detect-secrets; the whole
  webhook URL is the credential), `xapp-` app tokens.
- stripe_key: `sk_live_`, `rk_live_` and also `sk_test_`/`rk_test_` (test-mode secret keys
  still act on the account), `whsec_` webhook secrets. Publishable `pk_` keys are public.
- openai_api_key: legacy `T3BlbkFJ` keys (detect-secrets), `sk-proj-`/`sk-svcacct-`/
  `sk-admin-`/`sk-None-` keys and bare `sk-` + 32+ alphanumerics that mix digits, upper and
  lower case.
- anthropic_api_key: `sk-ant-` + 32+; never reported as OpenAI.
- google_api_key: AIza + 35. npm_token: npm_ + 36, or a legacy UUID `_authToken=` value.
  pypi_token: detect-secrets' pypi.org / test.pypi.org macaroon prefixes.
- jwt: three base64url segments starting `eyJ` whose header and payload decode to JSON
  (detect-secrets' validity check).
- basic_auth_url: only the password of `user:password@host` credentials after `scheme://`;
  user and host stay.
- secret_assignment: only the value (up to 2 KiB) after a name ending in password/passwd/
  passphrase/pwd/pass/secret/token/<api|access|secret|private|auth|...>key (detect-secrets'
  keyword list plus ours), separated by `=`, `:`, `:=`, `=>` (or compared with `==`/`!=` to a
  quoted literal), quoted or not; the name stays. Not a literal: empty, shorter than 4, no
  letter, `$VAR`/`${VAR}`/`%(x)s`/`{{ x }}`/`<x>` templates, masks (`***`, `xxxx`), placeholder
  words (changeme, your-token-here, null, str, ...), names such as `GITHUB_TOKEN`, paths, URLs;
  unquoted also calls/indexing, `a.b` attribute paths, YAML tags/anchors/aliases, and bare
  identifiers with at most three digits where code is likely (`f(password=pw)`,
  `token = token_value`, `secret: clientSecret,`). An unquoted `name: value` counts only when
  the value ends the line (YAML), not `password: str = ""` or prose after a colon. In a URL
  query (`?token=`) the value stops at `&`/`#`, after `;` (connection strings) at `;`.

Overlaps: a recognized format beats a context rule (assignment, URL password, AWS secret, npm
`_authToken`) it overlaps, even a longer one; otherwise the longest span wins, then the more
specific kind. Findings never overlap. Regexes use ASCII semantics. A finding glued to token
characters can change how its neighbours read once it is a marker, so then the redacted text
is scanned again until nothing new appears: `redact(redact(t).text)` changes nothing.

Speed: every rule sits behind a literal anchor. The text is scanned once per pivot character
(`_`, `-`, `J`, `:`, `A`, `G`) with regexes that begin with that literal (sre scans those fast;
one alternation of all anchors would not), and three times (token/key, pass/pwd, secret) on an
ASCII-lowercased copy; rule code runs only where an anchor occurs. Work per anchor is bounded,
so pathological input stays near linear.

Modules: `kinds` (kinds, markers, results), `literals` (is a value a literal secret?),
`formats` (format rules), `assignments` (keyword assignments), `anchors` (the rule table and
scan pivots), `engine` (the scan and its overlap rules).
"""

from rutter_core.kernel.deferred import defer_import

# detect-secrets imports `requests` at its top for online verification, which redaction never
# does: imported on first use instead (a tenth of a second of every CLI call).
defer_import("requests")

from rutter_core.discovery.redaction.engine import find_secrets, redact  # noqa: E402
from rutter_core.discovery.redaction.kinds import (  # noqa: E402
    REDACTION_KINDS,
    RedactionResult,
    SecretFinding,
    marker,
)

__all__ = [
    "REDACTION_KINDS",
    "RedactionResult",
    "SecretFinding",
    "find_secrets",
    "marker",
    "redact",
]
