"""Where the language server is put together: the feature list, and the server built with it.

As esbonio's `setup`: the one place that names every feature. The server and the plumbing
import no feature, and no feature imports another (import-linter says so), so adding one is a
package under `rutter_lsp.features` and a line here.
"""

from __future__ import annotations

from typing import Final

from rutter_lsp.features.assembly import Assembly
from rutter_lsp.features.branches import Branches
from rutter_lsp.features.codelens import CodeLens
from rutter_lsp.features.compaction import Compaction
from rutter_lsp.features.diagnostics import Diagnostics
from rutter_lsp.features.documents import Documents
from rutter_lsp.features.folders import Folders
from rutter_lsp.features.history import History
from rutter_lsp.features.hover import Hover
from rutter_lsp.features.instructions import Instructions
from rutter_lsp.features.lifecycle import Lifecycle
from rutter_lsp.features.memory import Memory
from rutter_lsp.features.pins import Pins
from rutter_lsp.features.runs import Runs
from rutter_lsp.features.session import SessionContinuity
from rutter_lsp.features.sessions import Sessions
from rutter_lsp.features.transcripts import Transcripts
from rutter_lsp.server import FeatureFactory, RutterServer

FEATURES: Final[tuple[FeatureFactory, ...]] = (
    Lifecycle, Folders, Documents, Diagnostics, CodeLens, Instructions, Hover, Runs, Memory,
    SessionContinuity, Branches, Sessions, Pins, Transcripts, History, Assembly, Compaction,
)  # fmt: skip
"""Every feature, in order: the lifecycle first (it calls the others' hooks), the folders before
the documents (files are watched once their folders are served), and in a refresh round the
diagnostics before the code lens refresh and the notifications."""


def create_server(*, database_url: str | None = None) -> RutterServer:
    """A server with every feature set up."""
    return RutterServer(FEATURES, database_url=database_url)
