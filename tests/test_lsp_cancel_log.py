"""The server log stays quiet when an editor cancels a request it already has the answer to
(issue 19): VS Code cancels hovers and code lenses the person moved away from, often after the
answer was sent, and pygls warned `Cancel notification for unknown message id` each time.

The real server as a subprocess, fed raw bytes (`tests.test_lsp_malformed.session`)."""

from __future__ import annotations

import logging
from pathlib import Path

from rutter_lsp.logs import LOGGER_NAME, QuietClientErrors
from tests.lsp_wire import error_code, frame, session

CANCEL_WARNING = "Cancel notification for unknown message id"


def test_cancelling_an_answered_request_leaves_the_log_quiet(tmp_path: Path) -> None:
    answered = frame({"jsonrpc": "2.0", "id": 4, "method": "rutter/nothing"})
    cancel = frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 4}})
    # A request after the cancel: its answer shows the server read the cancel and went on.
    after = frame({"jsonrpc": "2.0", "id": 5, "method": "rutter/nothing-either"})
    by_id, _, stderr = session(tmp_path, answered + cancel + cancel + after)
    assert error_code(by_id[4]) == -32601
    assert error_code(by_id[5]) == -32601
    assert CANCEL_WARNING not in stderr


def _record(msg: str, level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord("pygls.protocol.json_rpc", level, __file__, 1, msg, ("7",), None)


def test_the_cancel_record_is_kept_as_debug_when_debugging() -> None:
    logger = logging.getLogger(LOGGER_NAME)
    before = logger.level
    try:
        logger.setLevel(logging.DEBUG)
        record = _record('Cancel notification for unknown message id "%s"')
        assert QuietClientErrors().filter(record)
        assert record.levelno == logging.DEBUG
        logger.setLevel(logging.INFO)
        assert not QuietClientErrors().filter(_record(record.msg))
    finally:
        logger.setLevel(before)


def test_other_pygls_warnings_still_reach_the_log() -> None:
    record = _record('Ignoring notification for unknown method "%s"')
    assert QuietClientErrors().filter(record)
    assert record.levelno == logging.WARNING
