"""Secret redaction: the one engine every surface uses (docs/reference/redaction.md).

`redact(text)` replaces each secret with `[REDACTED:<kind>]` and reports exact spans. Patterns
come from detect-secrets where its plugin fits span-level work (AWS access keys, classic GitHub
tokens, GitLab, Slack, PyPI, legacy OpenAI keys, SendGrid, Twilio, Square, its keyword list and
JWT validity check), read from its installed plugin files (`upstream`: importing them would
load its scanner and `requests`); our own rules cover what it lacks or reports only per line.
No entropy detectors: hashes, UUIDs and base64 in ordinary text are left alone.

Matching rules and decisions (kinds are `REDACTION_KINDS`; docs/file-conventions.md lists them
for users with every exemption):

- private_key: the whole `-----BEGIN <label>PRIVATE KEY-----` ... matching `-----END ...-----`
  block (any label: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ... BLOCK, none; SSH2 `---- BEGIN`),
  read token by token (`formats.match_private_key`): base64 runs, line breaks (newlines, `\\n`
  escapes in a string literal, `<br>`), armor headers (`Proc-Type:`, `DEK-Info:`, `Version:`),
  and whatever wraps each line (quotes and commas of list items, `| … |` table cells, YAML
  `- "…"`, a trailing `\\` or `+`, `#`/`//`/`>`/`--` comment leaders, indentation, one short
  word such as `1. ` or `REM `), also the whole block joined on one line. Prose between BEGIN
  and END is no block (more than three short words). Without an END line, the header plus
  the key material after it; a header with no body is prose and stays. PuTTY `.ppk` blocks.
- aws_access_key: AKIA/ASIA/ABIA/ACCA/A3T + 16 (detect-secrets), not inside an upper-case run.
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
- google_api_key: AIza + 35. google_oauth: `ya29.` access tokens, `1//0` refresh tokens,
  `GOCSPX-` client secrets. npm_token: npm_ + 36, or a legacy UUID `_authToken=` value.
  pypi_token: detect-secrets' pypi.org / test.pypi.org macaroon prefixes.
- Services (`providers`): sendgrid_key `SG.` (detect-secrets), twilio_key `AC`/`SK` + 32
  (detect-secrets), huggingface_token `hf_`/`api_org_`, mailgun_key `key-` + 32 hex,
  mailchimp_key 32 hex + `-usN`, shopify_token `shpat_`/`shpca_`/`shppa_`/`shpss_`,
  digitalocean_token `dop_v1_`/`doo_v1_`/`dor_v1_`, telegram_bot_token `<digits>:<35>` (also
  right after `/bot`), discord_token (bot tokens, webhook URLs), square_token `sq0atp-`/
  `sq0csp-` (detect-secrets)/`EAAA`, databricks_token `dapi`, atlassian_token `ATATT3`/
  `ATCTT3`/`ATBB`, and api_token for about forty more registered prefixes.
- jwt: three base64url segments starting `eyJ` whose header and payload decode to JSON
  (detect-secrets' validity check, restated in `formats.jwt_valid`).
- basic_auth_url: only the password of `user:password@host` credentials after `scheme://`;
  user and host stay. Without a scheme (`app:pw@db.internal:5432`) only when the host has a
  letter TLD, is `localhost` or a dotted quad, and the password has a digit, a symbol (not
  `._-`) or mixed case (`npm:lodash@4.17.21`, `team:platform@example.com` stay). URL passwords
  under 4 characters (`https://a:b@host`) are examples.
- login_password: the password of `curl -u/--user user:pw`, of a `.netrc` `machine ...
  login ... password ...` entry, of a MySQL/MariaDB client's `-pSECRET` (`-p` alone prompts)
  and of a `--password VALUE` option that looks typed. basic_auth: the base64 `user:pw` of
  `Authorization: Basic` and of a docker config's `"auth"`. bearer_token: an unknown `Bearer`
  value of 16+ characters that mixes digits and both cases. npm_token also takes an `.npmrc`
  `_auth=` value. azure_sas: the `sig=` of an Azure SAS URL, connection string or Service Bus
  `SharedAccessSignature` (the signature; the other parameters stay).
- secret_assignment: only the value (up to 2 KiB) after a name ending in password/passwd/
  passphrase/pwd/pass/secret/token/<api|access|secret|private|auth|...>key (detect-secrets'
  keyword list plus ours), separated by `=`, `:`, `:=`, `=>` (or compared with `==`/`!=` to a
  quoted literal), quoted or not; the name stays. Also the text of an XML element so named
  (`<password>…</password>`, `<apiKey>`) and the `value="…"` of `<add key="Password" …/>`. Not a
  literal (`literals`): empty, shorter than 4, no letter, `$VAR`/`${VAR}`/`%(x)s`/`{{ x
  }}`/`<x>` templates, masks (`***`, `xxxx`), placeholder and settings words (changeme,
  not-needed, your-token-here, test-key, write, read, none, str, minutes, ...), names such as
  `GITHUB_TOKEN` or `HEADER.PAYLOAD`, `[described]` values, four-word prose, paths, URLs,
  ARNs/URNs, secret-manager references (`op://`, `vault:`, SOPS `ENC[...]`), versions
  (`v2.3.1-rc4`), and under a name that is no password's a lower-case hyphenated object name
  (`secret: db-credentials`); unquoted (or in a backtick code span) also calls/indexing, `a.b`
  attribute paths and references with a TypeScript non-null `!`, YAML tags/anchors/aliases, and
  bare identifiers with at most three digits where code is likely (`f(password=pw)`, `token =
  token_value`, `secret: clientSecret,`), unless the value is written like a password (a digit
  inside a mixed-case word: `S3cretPass`, which is no name of a secret either) or the line is a
  setting of an INI/TOML `[section]`. A quote that closes a string or code span opened before
  the name is no value (``with `api_key=`. Custom``), nor is a reStructuredText role
  (``:token:`x` ``), and cursor names (NextToken, page_token, ClientToken, LockToken,
  existingSecret, ...: `assignments._CURSOR_TOKENS`) hold no credential. An unquoted `name:
  value` counts only when the value ends the line (YAML), not `password: str = ""` or prose
  after a colon, except a password name followed by a word of 6+ characters with letters and
  digits and then more prose (`password: hunter2 is the staging DB password.`). In a URL query
  (`?token=`) the value stops at `&`/`#`, after `;` (connection strings) at `;`.

Exemptions (`literals.is_documented_example`): a value that vendors publish as an example
(AWS's `...EXAMPLE` keys, jwt.io's sample token, Stripe's documented test key; kept as SHA-256
digests) or a masked token (one character 8+ times in a row, or `example` in it) is shown as
written; never a private key block (one without key material, `\\nXXXX\\n`, is no block).

Variants (`normalise`): text with zero-width or other invisible characters, Cyrillic/Greek
look-alikes, fullwidth forms or unusual spaces (a fullwidth colon or NBSP after `password`) is
scanned a second time as an ASCII matching copy; each finding there is mapped back to the
original span (invisible characters included). Distinctive prefixes (`glue=True`: ghp_,
github_pat_, glpat-, xox?-, sk_live_, sk-ant-, sk-proj-, AIza, shpat_, ...) are found glued to
a word or to another token.

Overlaps: a recognized format beats a context rule (assignment, URL password, AWS secret, npm
`_authToken`, logins, Bearer) it overlaps, even a longer one; otherwise the longest span wins,
then the more specific kind. Findings never overlap. Regexes use ASCII semantics. A finding
glued to token characters can change how its neighbours read once it is a marker, so then the
redacted text is scanned again until nothing new appears: `redact(redact(t).text)` changes
nothing.

Speed: every rule sits behind a literal anchor. The text is scanned once per pivot character
(`_`, `-`, `J`, `:`, `.`, `@` and the first letter of anchors without one; a lone anchor is its
own literal) with regexes that begin with that literal (sre scans those fast; one alternation
of all anchors would not), and three times (token/key, pass/pwd, secret) on an ASCII-lowercased
copy; rule code runs only where an anchor occurs. Work per anchor is bounded, so pathological
input stays near linear. The rule table is built on first use and each rule's regex compiled
when an anchor first reaches it.

Modules: `kinds` (kinds, markers, results), `literals` (is a value a literal secret? documented
examples), `formats` (building blocks, key blocks, URL passwords), `providers` (service token
formats), `credentials` (logins outside URLs), `assignments` (keyword assignments), `upstream`
(detect-secrets' patterns from its files), `normalise` (the matching copy), `anchors` (the rule
table and scan pivots), `engine` (the scan and its overlap rules).
"""

from rutter_core.discovery.redaction.engine import find_secrets, redact
from rutter_core.discovery.redaction.kinds import (
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
