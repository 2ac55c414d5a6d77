"""Where the core error hierarchy meets the command line: exit codes, the error document, and
the CLI's wording of structured hints, all in one place."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from rutter_core.kernel.errors import ErrorCategory, Hint, HintValue, RutterError

EXIT_OK = 0
EXIT_CODES: dict[ErrorCategory, int] = {
    ErrorCategory.INTERNAL: 1,
    ErrorCategory.USAGE: 2,
    ErrorCategory.REJECTED: 3,
    ErrorCategory.CONFLICT: 4,
    ErrorCategory.NOT_FOUND: 5,
}

HintWording = Callable[[Mapping[str, HintValue]], str]


def _endpoint_env(params: Mapping[str, HintValue], setting: str) -> str:
    """The variable a model summarizer's setting is read from (`RUTTER_SUMMARIZER_OPENAI_MODEL`)."""
    return f"RUTTER_SUMMARIZER_{str(params.get('summarizer', 'openai')).upper()}_{setting}"


HINT_WORDING: dict[str, HintWording] = {
    # -- store
    "choose_store": lambda _: (
        "check the path, or choose the store with --database-url, RUTTER_DATABASE_URL or "
        "RUTTER_HOME"
    ),
    "writable_store": lambda _: (
        "the store is read-only here: remount it read-write, make the file and its directory "
        "writable, or choose another store with --database-url, RUTTER_DATABASE_URL or "
        "RUTTER_HOME"
    ),
    # -- memory (rutter context memory ...)
    "choose_workspace": lambda _: (
        "pass --workspace ID (see `rutter workspace list`) or register one with "
        "`rutter workspace register ID ROOT`"
    ),
    "drop_workspace": lambda _: "drop --workspace, or use --scope project",
    "give_a_change": lambda _: (
        "give at least one of --title, --content, --reference (or --clear-references), --retention"
    ),
    "list_memories": lambda _: "see `rutter context memory list --all`",
    "show_memory": lambda p: f"see its current version with `rutter context memory show {p['id']}`",
    "reread_memory": lambda p: (
        f"show it again (`rutter context memory show {p['id']}`) and retry with "
        f"--version {p['version']}"
    ),
    "list_candidates": lambda _: (
        "list the candidates again with `rutter context memory candidates` and review the one "
        "offered now"
    ),
    "reread_candidate": lambda p: (
        f"show it again (`rutter context memory candidate show {p['candidate_id']}`) and retry "
        "with the version, fingerprint and source version it shows"
    ),
    "store_redacted": lambda _: (
        "remove it, or pass --redact-sensitive to store the text with each secret replaced by "
        "[REDACTED:<kind>]"
    ),
    # -- workspaces
    "register_workspace": lambda params: (
        f"register it with `rutter workspace register {params['workspace_id']} ROOT` "
        "(see `rutter workspace list`)"
        if params.get("workspace_id")
        else "register it with `rutter workspace register ID ROOT`"
    ),
    "move_workspace_or_choose_another_id": lambda params: (
        "if its directory moved, point it there with "
        f"`rutter workspace move {params['workspace_id']} NEWROOT`; otherwise choose another ID"
    ),
    "choose_another_id": lambda _: (
        "register this machine's location under another ID (`rutter workspace list --all` shows "
        "the IDs in use)"
    ),
    "use_this_machine_workspace": lambda params: (
        f"name this machine's registration of the project instead (--workspace "
        f"{params['this_machine_workspace_id']}; `rutter workspace list` shows them)"
        if params.get("this_machine_workspace_id")
        else "register this machine's checkout of the project under an ID of its own with "
        "`rutter workspace register ID PATH` and name that one (`rutter workspace list` shows "
        "the IDs in use)"
    ),
    "fix_machine_id": lambda _: (
        "set RUTTER_MACHINE_ID to 1-128 letters, digits, '.', '_', ':' or '-' naming this "
        "machine, or repair the machine ID file named (see docs/team.md, machines)"
    ),
    "set_workspace_project": lambda params: (
        "change the project a registration is a location of with "
        f"`rutter workspace project set {params['workspace_id']} NAME` (or `--remote`)"
    ),
    "use_or_remove_holder": lambda params: (
        f"use that ID, or free the root with `rutter workspace remove {params['workspace_id']}` "
        "(it says what belongs to it)"
    ),
    "move_or_cascade_workspace": lambda params: (
        "if its directory moved, point it there with "
        f"`rutter workspace move {params['workspace_id']} NEWROOT`; to delete it with all of "
        f"that, `rutter workspace remove {params['workspace_id']} --cascade` (see "
        f"`rutter run list --workspace {params['workspace_id']} --all` first)"
    ),
    "move_workspace": lambda params: (
        f"if the directory moved, `rutter workspace move {params['workspace_id']} NEWROOT`; "
        f"otherwise `rutter workspace remove {params['workspace_id']} --cascade`"
        if params.get("workspace_id")
        else "if the directory moved, `rutter workspace move ID NEWROOT` (see "
        "`rutter workspace list`); otherwise `rutter workspace remove ID --cascade`"
    ),
    # -- runs
    "find_run": lambda _: "see `rutter run list --all` for the runs in the store",
    "start_or_find_thread": lambda _: (
        "leave out --thread to start a new one, or take a thread_id from `rutter run list --all`"
    ),
    # -- compaction (rutter session compact ...)
    "resolve_compaction": lambda params: (
        f"check whether the summarizer answered, then run `rutter session compaction resolve "
        f"{params['operation_key']} --abandon` (or `--retry` to call it again)"
    ),
    "fit_required_context": lambda params: (
        "remove pins (`rutter context pin remove PIN`), raise --budget to at least "
        f"{params['needed']}, or choose a model with a larger window"
    ),
    "give_summarizer_command": lambda _: (
        "pass --summarizer-command 'PROGRAM ARG...' or set RUTTER_SUMMARIZER_COMMAND"
    ),
    "give_summarizer_base_url": lambda p: (
        f"pass --summarizer-base-url URL or set {_endpoint_env(p, 'BASE_URL')} (an http(s) URL "
        "without credentials, query or fragment; leave both out for the vendor's)"
    ),
    "give_summarizer_model": lambda p: (
        f"pass --summarizer-model MODEL or set {_endpoint_env(p, 'MODEL')}"
    ),
    "give_summarizer_key_env": lambda p: (
        f"pass --summarizer-key-env NAME or set {_endpoint_env(p, 'KEY_ENV')} to the NAME of the "
        "variable that holds the key (not the key), or to '' to send none"
    ),
    "set_summarizer_key": lambda p: (
        f"export the key in {p['key_env']}, or name another variable with --summarizer-key-env "
        f"(or {_endpoint_env(p, 'KEY_ENV')}); '' sends no key"
    ),
    "use_https_endpoint": lambda p: (
        f"use an https URL in --summarizer-base-url (or {_endpoint_env(p, 'BASE_URL')}), a "
        "loopback address, or send no key (--summarizer-key-env '')"
    ),
    "check_summarizer_endpoint": lambda p: (
        f"check that the endpoint in {_endpoint_env(p, 'BASE_URL')} (or --summarizer-base-url) is "
        f"up, reachable from here and speaks the {p['summarizer']} protocol, and the model name"
    ),
    "check_summarizer_key": lambda p: (
        f"check the key in {p['key_env']}: is it valid for this endpoint, and allowed the model?"
    ),
    "check_summarizer_model": lambda p: (
        f"check the model name (--summarizer-model or {_endpoint_env(p, 'MODEL')}) and that the "
        "endpoint serves it; a smaller --input-tokens may help"
    ),
    "wait_for_summarizer": lambda p: (
        (f"wait {p['retry_after']} seconds" if "retry_after" in p else "wait")
        + " and compact again with a new operation key, or check the account's quota"
    ),
    "retry_summarizer_later": lambda _: (
        "the endpoint failed on its side: compact again later with a new operation key"
    ),
    "raise_summarizer_timeout": lambda p: (
        f"raise --summarizer-timeout (it was {p.get('timeout', '?')} seconds), or compact with "
        "a smaller --input-tokens"
    ),
    "narrow_summarizer_input": lambda _: (
        "compact with a smaller --input-tokens or a narrower --focus, so the summary fits the "
        "model's output limit"
    ),
    "check_summarizer_output": lambda p: (
        "the command must print the summary on its stdout"
        if p.get("summarizer") == "command"
        else f"check the model (--summarizer-model or {_endpoint_env(p, 'MODEL')}) and what the "
        "endpoint answers"
    ),
    "rotate_summarizer_key": lambda p: (
        f"the key in {p.get('key_env', 'its variable')} appears in the thread: revoke it, "
        "then compact with a new one"
    ),
    "copy_fingerprints": lambda params: (
        f"copy it from `rutter context instructions --run {params['run_id']}`"
    ),
    "review_run_again": lambda params: (
        f"review again with `rutter context instructions --run {params['run_id']}` and confirm "
        "what it shows"
    ),
    # -- session continuity
    "find_thread": lambda _: (
        "take a thread_id from `rutter run show RUN` (runs are listed by `rutter run list --all`)"
    ),
    "find_note": lambda _: "see the thread's notes with `rutter session notes THREAD --all`",
    "reread_note": lambda p: (
        f"see it again (`rutter session notes {p['thread_id']} --all`) and retry with "
        f"--version {p['version']}"
    ),
    "find_session": lambda _: (
        "take a session_id from `rutter run show RUN` (runs are listed by `rutter run list --all`)"
    ),
    "choose_stored_node": lambda _: (
        "see the stored nodes with `rutter session tree RUN` (projected ones say so)"
    ),
    "name_session_or_run": lambda _: "give one ID: a session's (ses_...) or a run's (run_...)",
    "find_node": lambda _: (
        "list a run's nodes with `rutter session tree RUN`, or take a node ID from "
        "`rutter run create --json` (root_node_id) or from a checkpoint's answer (node_id)"
    ),
    # -- pins (rutter context pin ...)
    "find_pin": lambda _: "see a thread's pins with `rutter context pin list THREAD`",
    "list_pins": lambda p: (
        f"see them with `rutter context pin list {p['thread_id']}` and remove one with "
        "`rutter context pin remove PIN --version N`"
    ),
    "reread_pin": lambda p: (
        f"see it again (`rutter context pin list {p['thread_id']}`) and retry with "
        f"--version {p['version']}"
    ),
    "name_thread_or_run": lambda _: "give one ID: a thread's (thr_...) or a run's (run_...)",
    "list_proposals": lambda _: "see the proposals with `rutter context pin proposals --all`",
    # -- history (rutter history ...)
    "search_history_again": lambda _: (
        "search again with `rutter history search QUERY --run RUN` for a current handle or cursor"
    ),
    "drop_workspace_for_run": lambda _: "drop --workspace: a run searches its own workspace",
    "answer_custom": lambda _: (
        "answer `custom --text T --pin` to pin your own words instead of the proposed text"
    ),
    # -- context assembly (rutter context assemble|audit|report)
    "list_assemblies": lambda _: "see a run's assemblies with `rutter context audit RUN`",
    # -- agents' configurations (rutter connect ...)
    "use_project_scope": lambda _: (
        "use --scope project (the agent's user configuration is its own)"
    ),
    "fix_agent_config": lambda _: (
        "fix the file by hand, or see the entry to add with `rutter connect AGENT --dry-run --json`"
    ),
    "force_connect": lambda _: (
        "see the change with --dry-run, then pass --force to replace that entry with this one"
    ),
    "connect_again": lambda _: "run `rutter connect` again once the agent has stopped writing it",
    # -- HTTP API (rutter http ...)
    "choose_token_scope": lambda _: "pass --scope read or --scope control",
    "list_tokens": lambda _: "see the tokens with `rutter http token list --all`",
    "give_bind": lambda _: "pass --bind HOST:PORT, e.g. --bind 127.0.0.1:8787",
    "give_workers": lambda _: "pass --workers N, e.g. --workers 2 (one per core)",
    "choose_free_port": lambda _: (
        "choose another port (--bind 127.0.0.1:0 picks a free one), or an address of this machine"
    ),
    "give_tls_pair": lambda _: "pass both --tls-cert PEM and --tls-key PEM (existing files)",
    "bind_loopback_or_tls": lambda _: (
        "bind 127.0.0.1 or ::1, or give --tls-cert and --tls-key, or (behind a TLS proxy "
        "only) pass --allow-non-loopback"
    ),
    "give_allow_host": lambda _: "pass --allow-host NAME, e.g. --allow-host rutter.internal",
    "allow_host": lambda _: "start `rutter http` with --allow-host NAME for each name it serves",
}
"""How the CLI words each `Hint.fix` (naming its own flags and commands)."""


def worded(hint: Hint | None) -> str | None:
    if hint is None:
        return None
    wording = HINT_WORDING.get(hint.fix)
    return None if wording is None else wording(hint.params)


def message_of(error: RutterError) -> str:
    """The surface-neutral message, followed by what to do on the command line."""
    advice = worded(error.hint)
    return error.message if advice is None else f"{error.message}; {advice}"


def report(error: RutterError, *, as_json: bool) -> int:
    """Print `error` (the document on stdout with `--json`, the message on stderr) and return
    the exit code."""
    message = message_of(error)
    if as_json:
        from rutter_cli.common import print_json  # common imports typer; `rutter --help` not

        document = error.to_json()
        document["message"] = message
        print_json({"error": document})
    sys.stderr.write(f"rutter: error[{error.code}]: {message}\n")
    return EXIT_CODES[error.category]
