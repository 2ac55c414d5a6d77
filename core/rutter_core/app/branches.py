"""Operations on the branches of session continuity: fork and resume a node, the session tree,
comparing two nodes (docs/reference/continuity.md), and a workspace's newest nodes for pickers
(`recent`, with the tree's drift markers). One params model per operation, and
`BranchOperations` (`Rutter(store, reader).branches`).

Each spans areas, so it is orchestrated here. A fork or resume is one write transaction: the
node is read and verified (continuity), the revision it pins is read from the runs' ledger and
verified, and the new run with its branch marker and that revision as its revision 1 is created
(runs). A tree reads the connected nodes, their runs, the pinned revisions of roots and branch
markers, and what became of the referenced memories in one read transaction (no memory body
is read), then the files (discovery for each run's target, the workspace's git identity) to
compute the drift markers of now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, StrictInt, StrictStr
from sqlalchemy.engine import Connection

from rutter_core.app.continuity import ContinuityParams
from rutter_core.app.models import ParamsProblem, params_error
from rutter_core.continuity import tree as trees
from rutter_core.continuity.compaction.request import require_operation_key
from rutter_core.continuity.model import ContinuityDocument
from rutter_core.continuity.service import (
    DEFAULT_RECENT,
    MAX_RECENT,
    BranchedRun,
    BranchKind,
    BranchPoint,
    ComparedNode,
    GitIdentity,
    NodeComparison,
    PinnedFingerprint,
    PinnedRef,
    StoredNode,
    branchable_node,
    compare,
    compared,
    inherited,
    keyed_branch,
    pinned_of,
    read_git_identity,
    read_node,
    recent_nodes,
    record_keyed_branch,
    refuse_projected,
    require_pinned_match,
)
from rutter_core.continuity.snapshot import ContinuityNode
from rutter_core.continuity.tree import Drift, SessionTree, TreeNode
from rutter_core.kernel.actors import OperatorActor
from rutter_core.kernel.clock import now_rfc3339
from rutter_core.kernel.errors import Hint, RutterError, StoreError, UsageError
from rutter_core.memory.service import referenced_memories
from rutter_core.runs import service as runs
from rutter_core.runs.policy import not_pinned, validate_goal
from rutter_core.workspaces.service import (
    files_here,
    find_workspace,
    project_workspace_ids,
    require_workspace,
)

if TYPE_CHECKING:
    from rutter_core.app.facade import Rutter
    from rutter_core.discovery.fsread import FileReader
    from rutter_core.discovery.snapshot import Snapshot
    from rutter_core.runs.model import RunRecord

NodeId = StrictStr


_BRANCH_WORKSPACE = Field(
    None,
    description="the registration the new run is made on: any location of the node's project "
    "(another path or machine); its files are what the new run's drift compares against "
    "(default: the node's own run's workspace)",
)

_OPERATION_KEY = Field(
    None,
    description="the operation's key: the same key again answers the same run and never "
    "makes a second one",
)


class ForkParams(ContinuityParams):
    node_id: NodeId = Field(description="the stored node to fork from (node_...)")
    goal: StrictStr = Field(description="what the new run (and its new mission) should achieve")
    operation_key: StrictStr | None = _OPERATION_KEY
    workspace_id: StrictStr | None = _BRANCH_WORKSPACE


class ResumeParams(ContinuityParams):
    node_id: NodeId = Field(description="the stored node to resume from (node_...)")
    operation_key: StrictStr | None = _OPERATION_KEY
    workspace_id: StrictStr | None = _BRANCH_WORKSPACE


class TreeParams(ContinuityParams):
    session_id: StrictStr | None = Field(None, description="a session's ID (ses_...)")
    run_id: StrictStr | None = Field(None, description="or a run's ID (run_...)")
    workspace_id: StrictStr | None = Field(
        None,
        description="compute the drift markers against this registration's files (a location "
        "of the run's project on this machine); default: each run's own workspace",
    )


class CompareParams(ContinuityParams):
    node_a: NodeId = Field(description="the first node (A)")
    node_b: NodeId = Field(description="the second node (B): changes are from A to B")


RecentLimit = Annotated[StrictInt, Field(ge=1, le=MAX_RECENT)]
"""How many recent nodes to list: refused as `invalid_params` beyond the bounds (no service
checks it again)."""


class RecentParams(ContinuityParams):
    workspace_id: StrictStr = Field(
        description="the workspace whose project's sessions to list (made through any of its "
        "registrations); the drift markers compare against this workspace's files"
    )
    limit: RecentLimit = Field(DEFAULT_RECENT, description=f"at most this many (1-{MAX_RECENT})")


class RecentNodes(ContinuityDocument):
    """The workspace's newest stored nodes across its sessions (checkpoints, roots, branch
    markers), newest first, each as a session tree lists it (with its drift markers of now)."""

    workspace_id: str
    computed_at: str
    items: tuple[TreeNode, ...]
    has_more: bool


class BranchOperations:
    def __init__(self, rutter: Rutter) -> None:
        self._rutter = rutter

    def fork(self, params: ForkParams, *, actor: OperatorActor) -> BranchedRun:
        """A new mission and run from the node: revision 1 is the snapshot the node pins."""
        return self._branch(
            params.node_id, goal=params.goal, kind="fork", actor=actor, key=params.operation_key,
            workspace_id=params.workspace_id,
        )  # fmt: skip

    def resume(self, params: ResumeParams, *, actor: OperatorActor) -> BranchedRun:
        """A new run of the node's mission from the node (the mission reopens if closed)."""
        return self._branch(
            params.node_id, goal=None, kind="resume", actor=actor, key=params.operation_key,
            workspace_id=params.workspace_id,
        )  # fmt: skip

    def branch_source(self, params: ForkParams | ResumeParams) -> ContinuityNode:
        """The node a fork or resume would start from, verified, and a fork's goal checked,
        without writing anything: what a surface shows before asking the person (`rejected`
        for a projected node, `not_found`, `snapshot_tampered`, `invalid_goal`, ...)."""
        if isinstance(params, ForkParams):
            validate_goal(params.goal)
        with self._rutter.store.read() as conn:
            return branchable_node(conn, params.node_id)

    def _branch(
        self, node_id: str, *, goal: str | None, kind: BranchKind, actor: OperatorActor,
        key: str | None = None, workspace_id: str | None = None,
    ) -> BranchedRun:  # fmt: skip
        require_operation_key(key)
        now = now_rfc3339()
        with self._rutter.store.write() as conn:
            node = branchable_node(conn, node_id)
            inherits, not_inherited = inherited(node, kind)
            done = None if key is None else keyed_branch(conn, key, node.node_id, kind, goal)
            if done is not None:
                run = runs.load_run(conn, done.run_id)
                revision = runs.pinned_revision(conn, run, 1)
                if revision is None:
                    raise not_pinned(run.run_id)
                return BranchedRun(
                    kind=kind, run_id=run.run_id, mission_id=run.mission_id,
                    session_id=run.session_id, thread_id=run.thread_id,
                    node_id=done.marker_node_id, parent_node_id=node.node_id,
                    source_run_id=node.run_id, revision=1, fingerprint=revision.fingerprint,
                    status=run.status, mode=run.mode, profile=run.profile, inherits=inherits,
                    not_inherited=not_inherited, operation_key=key,
                )  # fmt: skip
            source = runs.load_run(conn, node.run_id)
            ref = pinned_of(node)
            revision = runs.pinned_revision(conn, source, ref.revision)
            if revision is None:
                raise not_pinned(source.run_id)
            require_pinned_match(node, ref, revision.fingerprint)
            machine = self._rutter.machine_id
            if workspace_id is not None and workspace_id != source.workspace_id:
                _require_same_project(conn, workspace_id, source.workspace_id, node.node_id)
            # The new run works in files of this machine: the named registration must be this
            # machine's; without one, this machine's registration of the node's project.
            place = files_here(
                conn, workspace_id or source.workspace_id, machine, named=workspace_id is not None
            ).workspace_id
            created = runs.create_pinned_run(
                conn, source, revision.snapshot, branch=BranchPoint(node.node_id, kind),
                goal=goal, actor=actor, now=now, workspace_id=place,
            )  # fmt: skip
            run = runs.load_run(conn, created.run_id)
            if key is not None:
                record_keyed_branch(
                    conn, key, node_id=node.node_id, kind=kind, goal=goal, run_id=run.run_id,
                    marker_node_id=created.root_node_id, actor=actor, now=now,
                )  # fmt: skip
        return BranchedRun(
            kind=kind, run_id=run.run_id, mission_id=run.mission_id,
            session_id=run.session_id, thread_id=run.thread_id, node_id=created.root_node_id,
            parent_node_id=node.node_id, source_run_id=source.run_id,
            revision=created.revision, fingerprint=created.fingerprint, status=run.status,
            mode=run.mode, profile=run.profile, inherits=inherits, not_inherited=not_inherited,
            operation_key=key,
        )  # fmt: skip

    def tree(self, params: TreeParams) -> SessionTree:
        """`session_tree.v1` of the session or run, with drift markers computed now."""
        now = now_rfc3339()
        with self._rutter.store.read() as conn:
            run = _subject(conn, params)
            start = trees.run_start(conn, run.run_id)
            if start is None:
                raise StoreError(
                    "store_corrupt",
                    f"run {run.run_id} has no root node or branch marker: the store was changed "
                    "outside rutter",
                    details={"run_id": run.run_id},
                )
            collected = trees.collect(conn, start)
            if params.workspace_id is not None:
                files_here(conn, params.workspace_id, self._rutter.machine_id)
            facts = _gather(
                conn, collected.nodes, now, self._rutter.machine_id, params.workspace_id
            )
        drifts = _Drifts(facts, self._rutter.reader)
        stored = [drifts.tree_node(raw) for raw in collected.nodes]
        projected = trees.projected_nodes(collected.decisions, stored, collected.compactions)
        nodes = trees.ordered([*stored, *projected])
        return SessionTree(
            workspace_id=run.workspace_id, run_id=run.run_id, session_id=run.session_id,
            root_node_id=nodes[0].node_id, computed_at=now, truncated=collected.truncated,
            nodes=nodes,
        )  # fmt: skip

    def recent(self, params: RecentParams) -> RecentNodes:
        """The workspace's newest stored nodes across its sessions, newest first, each with
        its drift markers of now (what a picker shows)."""
        now = now_rfc3339()
        with self._rutter.store.read() as conn:
            if find_workspace(conn, params.workspace_id) is not None:  # unknown: no nodes
                files_here(conn, params.workspace_id, self._rutter.machine_id)
            found, has_more = recent_nodes(conn, params.workspace_id, params.limit)
            facts = _gather(conn, found, now, self._rutter.machine_id, params.workspace_id)
        drifts = _Drifts(facts, self._rutter.reader)
        return RecentNodes(
            workspace_id=params.workspace_id, computed_at=now,
            items=tuple(drifts.tree_node(raw) for raw in found), has_more=has_more,
        )  # fmt: skip

    def compare(self, params: CompareParams) -> NodeComparison:
        """Two stored nodes side by side (section 10's fields), changes from A to B."""
        with self._rutter.store.read() as conn:
            a, side_a = _side(conn, params.node_a)
            b, side_b = _side(conn, params.node_b)
        return compare(a, side_a, b, side_b)


def _require_same_project(conn: Connection, place: str, origin: str, node_id: str) -> None:
    """A node is branched on another registration only of its own project: a location of the
    same project on another path or machine (docs/reference/workspaces.md#projects)."""
    require_workspace(conn, place)
    if origin not in project_workspace_ids(conn, place):
        raise UsageError(
            "node_not_in_project",
            f"node {node_id} belongs to another project than workspace {place}'s",
            details={"node_id": node_id, "workspace_id": place},
            hint=Hint("choose_workspace"),
        )


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the drift markers of stored nodes need from the store, read in one transaction."""

    by_run: dict[str, RunRecord]
    checked: dict[str, ContinuityNode | RutterError]
    pins: dict[str, PinnedFingerprint | RutterError | None]
    current: Mapping[str, trees.CurrentMemory]
    roots: dict[str, str]


def _gather(
    conn: Connection,
    nodes: Sequence[StoredNode],
    now: str,
    machine: str,
    local: str | None = None,
) -> _Facts:
    by_run = {rid: runs.load_run(conn, rid) for rid in {n.run_id for n in nodes}}
    checked = {n.node_id: trees.checked(n) for n in nodes}
    pins = {
        node_id: _pinned(conn, node, by_run[node.run_id])
        for node_id, node in checked.items()
        if isinstance(node, ContinuityNode)
    }
    memory_ids = [
        ref.memory_id
        for node in checked.values()
        if isinstance(node, ContinuityNode) and node.snapshot is not None
        for ref in node.snapshot.memory.references
    ]
    current = referenced_memories(conn, memory_ids, now_text=now)
    roots = {r.workspace_id: _root_of(conn, r, machine, local) for r in by_run.values()}
    return _Facts(by_run=by_run, checked=checked, pins=pins, current=current, roots=roots)


def _root_of(conn: Connection, run: RunRecord, machine: str, local: str | None) -> str:
    """The files a run's drift compares against: `local`'s (the registration asking, on this
    machine) when it is a location of the run's project, else the run's own workspace's, or
    this machine's registration of its project when that is another machine's (see
    `runs.workspace_root`)."""
    if local is not None and local in project_workspace_ids(conn, run.workspace_id):
        return files_here(conn, local, machine).root
    return runs.workspace_root(conn, run, machine=machine)


class _Drifts:
    """The files, after the read: discovery once per run target, git once per workspace root;
    then each stored node as a tree lists it, with its drift markers of now."""

    def __init__(self, facts: _Facts, reader: FileReader) -> None:
        self._facts = facts
        self._gits = {ws: read_git_identity(root) for ws, root in facts.roots.items()}
        self._live: dict[tuple[str, str], Snapshot | RutterError] = {}
        for each in facts.by_run.values():
            key = (each.workspace_id, each.target_path)
            if key not in self._live:
                self._live[key] = runs.discover_live(each, facts.roots[each.workspace_id], reader)

    def tree_node(self, raw: StoredNode) -> TreeNode:
        facts = self._facts
        node, owner = facts.checked[raw.node_id], facts.by_run[raw.run_id]
        pin = facts.pins.get(raw.node_id)
        drift = None
        if isinstance(pin, RutterError):
            node = pin  # what it pins fails its check: nothing of it is shown
        elif isinstance(node, ContinuityNode):
            drift = _drift(
                node, pin, self._live[(owner.workspace_id, owner.target_path)],
                self._gits[owner.workspace_id], facts.current,
            )  # fmt: skip
        return trees.stored_tree_node(node, raw, run_status=owner.status, drift=drift)


def _subject(conn: Connection, params: TreeParams) -> RunRecord:
    if (params.session_id is None) == (params.run_id is None):
        says = "name either a session or a run, not both and not neither"
        raise params_error(
            [ParamsProblem(None, "session_or_run", says)], hint=Hint("name_session_or_run")
        )
    if params.session_id is not None:
        return runs.load_run_of_session(conn, params.session_id)
    assert params.run_id is not None
    return runs.load_run(conn, params.run_id)


def _pinned(
    conn: Connection, node: ContinuityNode, run: RunRecord
) -> PinnedFingerprint | RutterError | None:
    """The revision the node pins, checked against the ledger; None when its run has none (a
    run imported without instructions); the error when either fails its integrity check."""
    ref: PinnedRef = pinned_of(node)
    try:
        revision = runs.pinned_revision(conn, run, ref.revision)
        if revision is None:
            return None
        require_pinned_match(node, ref, revision.fingerprint)
    except RutterError as error:
        return error
    return PinnedFingerprint(revision=revision.revision, fingerprint=revision.fingerprint)


def _drift(
    node: ContinuityNode,
    pin: PinnedFingerprint | None,
    live: Snapshot | RutterError,
    git: GitIdentity,
    current: Mapping[str, trees.CurrentMemory],
) -> Drift:
    snapshot = node.snapshot
    return Drift(
        memory=() if snapshot is None else trees.memory_markers(snapshot, current),
        instructions=None if pin is None else trees.instructions_marker(pin.fingerprint, live),
        git=None if snapshot is None else trees.git_marker(snapshot, git),
    )


def _side(conn: Connection, node_id: str) -> tuple[ContinuityNode, ComparedNode]:
    refuse_projected(conn, node_id)
    node = read_node(conn, node_id)
    run = runs.load_run(conn, node.run_id)
    pin = _pinned(conn, node, run)
    if isinstance(pin, RutterError):
        raise pin
    return node, compared(node, run_status=run.status, instructions=pin)


__all__ = [
    "BranchOperations",
    "BranchedRun",
    "CompareParams",
    "ComparedNode",
    "ForkParams",
    "NodeComparison",
    "RecentLimit",
    "RecentNodes",
    "RecentParams",
    "ResumeParams",
    "SessionTree",
    "TreeNode",
    "TreeParams",
]
