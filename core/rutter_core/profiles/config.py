"""The agents' own configuration of what they load, read as the agents read it.

- Codex: `project_doc_max_bytes` (its budget; 0 turns project docs off) and
  `project_doc_fallback_filenames` (names looked for after `AGENTS.md`) from
  `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`), overridden by the project's
  `.codex/config.toml` layers from the project root down to the working directory (the nearest
  wins), which Codex reads only for a project the user config marks trusted
  (`[projects."<path>"] trust_level = "trusted"`, for the project root or the directory).
- Gemini CLI: `context.fileName` (a string or a list of names) from the user's
  `~/.gemini/settings.json`, overridden by the project's `.gemini/settings.json`.

The homes come in as data (`AgentHomes`, read from the environment at the application edge):
nothing here reads the environment. A configuration file is read fail-closed: a file in the
workspace through the profiles' readers (links inside the workspace only), a file in a home
with a no-follow open (a link there is not read), at most `MAX_CONFIG_BYTES`; a link, a
non-regular file, a larger file, invalid TOML/JSON or a value of the wrong type is a reported
skip (`ConfigSkip`): the view then uses the defaults for it and says so in each source's
`why`. A skip never quotes the file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from rutter_core.discovery.fsread import FileReader
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.model import FileRule, Limits, Profile, load_profile
from rutter_core.profiles.reading import find, join, read

MAX_CONFIG_BYTES: Final = 256 * 1024
"""The most read of one configuration file."""
_MAX_NAMES: Final = 32
_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AgentHomes:
    """Where the agents keep their user configuration (None: not known, not read)."""

    home: str | None = None
    """The user's home directory (`HOME`)."""
    codex_home: str | None = None
    """`CODEX_HOME` when set; else `home`/.codex."""

    def codex_config(self) -> tuple[str, str] | None:
        if self.codex_home:
            return os.path.join(self.codex_home, "config.toml"), "$CODEX_HOME/config.toml"
        if self.home:
            return os.path.join(self.home, ".codex", "config.toml"), "~/.codex/config.toml"
        return None

    def gemini_settings(self) -> tuple[str, str] | None:
        if self.home:
            return os.path.join(self.home, ".gemini", "settings.json"), "~/.gemini/settings.json"
        return None


@dataclass(frozen=True, slots=True)
class ConfigSkip:
    """A configuration file (or one of its values) passed over; the defaults stand."""

    shown: str
    """How the file is named to the person (`~/.codex/config.toml`, `app/.codex/config.toml`)."""
    reason: str


@dataclass(frozen=True, slots=True)
class Configured:
    """A profile with the agent's configured names and limits applied."""

    profile: Profile
    said: tuple[str, ...] = ()
    """What the configuration changed or why it was passed over: added to every `why`."""
    skips: tuple[ConfigSkip, ...] = ()
    loads_nothing: bool = False
    """Codex with `project_doc_max_bytes = 0`: no project doc at all."""


class _Skipped(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _read_home_file(path: str) -> bytes | None:
    """A home configuration file's bytes; None when absent; `_Skipped` when refused."""
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Skipped("it is a symbolic link, which rutter does not follow here") from exc
        if exc.errno == errno.ENOTDIR:
            return None
        raise _Skipped(f"it cannot be read ({exc.strerror or 'error'})") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Skipped("it is not a regular file")
        if st.st_size > MAX_CONFIG_BYTES:
            raise _Skipped(f"it is over {MAX_CONFIG_BYTES // 1024} KiB")
        chunks: list[bytes] = []
        left = MAX_CONFIG_BYTES + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise _Skipped(f"it cannot be read ({exc.strerror or 'error'})") from exc
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > MAX_CONFIG_BYTES:
        raise _Skipped(f"it is over {MAX_CONFIG_BYTES // 1024} KiB")
    return raw


def _read_project_file(root: str, rel: str, reader: FileReader) -> bytes | None:
    """A configuration file inside the workspace, through the profiles' readers."""
    try:
        found = find(root, rel)
        if found is None:
            return None
        if found.size > MAX_CONFIG_BYTES:
            raise _Skipped(f"it is over {MAX_CONFIG_BYTES // 1024} KiB")
        return read(reader, root, found).raw
    except RutterError as error:
        raise _Skipped(f"it cannot be read ({error.code})") from error


def _decode(raw: bytes, kind: str) -> dict[str, object]:
    try:
        text = raw.decode("utf-8")
        value: object = tomllib.loads(text) if kind == "TOML" else json.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError) as exc:
        raise _Skipped(f"it is not valid {kind}") from exc
    if not isinstance(value, dict):
        raise _Skipped(f"it is not a {kind} table")
    return value


class ConfigReads:
    """Configuration files read and parsed once while this object lives (one refresh round of
    the editor shares one through its `Memo`; a view makes its own)."""

    def __init__(self) -> None:
        self._raw: dict[tuple[str, str], bytes | _Skipped | None] = {}
        self._tables: dict[str, tuple[bytes, dict[str, object] | _Skipped]] = {}

    def home(self, path: str) -> bytes | None:
        return self._once(("home", path), lambda: _read_home_file(path))

    def project(self, root: str, rel: str, reader: FileReader) -> bytes | None:
        return self._once((root, rel), lambda: _read_project_file(root, rel, reader))

    def decode(self, key: str, raw: bytes, kind: str) -> dict[str, object]:
        hit = self._tables.get(key)
        if hit is None or hit[0] is not raw:
            try:
                value: dict[str, object] | _Skipped = _decode(raw, kind)
            except _Skipped as skip:
                value = skip
            hit = self._tables[key] = (raw, value)
        if isinstance(hit[1], _Skipped):
            raise _Skipped(hit[1].reason)
        return hit[1]

    def _once(self, key: tuple[str, str], load: Callable[[], bytes | None]) -> bytes | None:
        if key not in self._raw:
            try:
                self._raw[key] = load()
            except _Skipped as skip:
                self._raw[key] = skip
        value = self._raw[key]
        if isinstance(value, _Skipped):
            raise _Skipped(value.reason)
        return value


def _names(value: object, key: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise _Skipped(f"its {key} is not a name or a list of names")
    names: list[str] = []
    for item in items:
        name = item.strip()
        if not name:
            continue
        if "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
            raise _Skipped(f"its {key} names something other than a file name")
        if name not in names:
            names.append(name)
    if len(names) > _MAX_NAMES:
        raise _Skipped(f"its {key} names more than {_MAX_NAMES} files")
    return tuple(names)


@dataclass(slots=True)
class _Layers:
    """Values found so far (a later layer overrides an earlier one) and what was skipped."""

    values: dict[str, tuple[object, str]] = field(default_factory=dict)
    skips: list[ConfigSkip] = field(default_factory=list)


def _codex_values(table: dict[str, object], shown: str, layers: _Layers) -> None:
    if "project_doc_max_bytes" in table:
        value = table["project_doc_max_bytes"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            layers.skips.append(
                ConfigSkip(shown, "its project_doc_max_bytes is not a whole number of bytes")
            )
        else:
            layers.values["project_doc_max_bytes"] = (value, shown)
    if "project_doc_fallback_filenames" in table:
        try:
            names = _names(
                table["project_doc_fallback_filenames"], "project_doc_fallback_filenames"
            )
            layers.values["project_doc_fallback_filenames"] = (names, shown)
        except _Skipped as skip:
            layers.skips.append(ConfigSkip(shown, skip.reason))


def _trusted(table: dict[str, object], paths: tuple[str, ...]) -> bool:
    projects = table.get("projects")
    if not isinstance(projects, dict):
        return False
    for path in paths:
        entry = projects.get(path)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def configure_codex(
    profile: Profile, homes: AgentHomes, root: str, levels: tuple[str, ...], reader: FileReader,
    reads: ConfigReads,
) -> Configured:  # fmt: skip
    """`levels`: workspace-relative directories from the project root to the target's."""
    layers = _Layers()
    user: dict[str, object] = {}
    where = homes.codex_config()
    if where is not None:
        path, shown = where
        try:
            raw = reads.home(path)
            if raw is not None:
                user = reads.decode(path, raw, "TOML")
                _codex_values(user, shown, layers)
        except _Skipped as skip:
            layers.skips.append(ConfigSkip(shown, skip.reason))
    project_files: list[tuple[str, bytes]] = []
    for level in levels:
        rel = join(level, ".codex/config.toml")
        try:
            raw = reads.project(root, rel, reader)
        except _Skipped as skip:
            layers.skips.append(ConfigSkip(rel, skip.reason))
            continue
        if raw is not None:
            project_files.append((rel, raw))
    said: list[str] = []
    if project_files:
        absolute = tuple(os.path.join(root, *lv.split("/")) if lv != "." else root for lv in levels)
        if _trusted(user, (absolute[0], absolute[-1])):
            for rel, raw in project_files:
                try:
                    _codex_values(reads.decode(rel, raw, "TOML"), rel, layers)
                except _Skipped as skip:
                    layers.skips.append(ConfigSkip(rel, skip.reason))
        else:
            shown_files = ", ".join(rel for rel, _ in project_files)
            said.append(
                f"Codex does not read {shown_files}: the project is not marked trusted in its "
                "user config"
            )
    spec = profile.sources[0]
    assert isinstance(spec, FileRule)
    update: dict[str, object] = {}
    fallbacks = layers.values.get("project_doc_fallback_filenames")
    if fallbacks is not None:
        names, shown = fallbacks
        assert isinstance(names, tuple)
        added = tuple(name for name in names if name not in spec.names)
        if added:
            new_spec = spec.model_copy(update={"names": (*spec.names, *added)})
            update["sources"] = (new_spec, *profile.sources[1:])
            said.append(f"fallback names {', '.join(added)} from {shown}")
    budget = layers.values.get("project_doc_max_bytes")
    loads_nothing = False
    if budget is not None:
        size, shown = budget
        assert isinstance(size, int)
        if size == 0:
            loads_nothing = True
        else:
            limits = Limits.model_validate({**profile.limits.model_dump(), "budget_bytes": size})
            update["limits"] = limits
            said.append(f"project_doc_max_bytes = {size} from {shown}")
    said.extend(_skip_text(skip, "Codex") for skip in layers.skips)
    configured = profile.model_copy(update=update) if update else profile
    return Configured(configured, tuple(said), tuple(layers.skips), loads_nothing)


def configure_gemini(
    profile: Profile, homes: AgentHomes, root: str, project_root: str, reader: FileReader,
    reads: ConfigReads,
) -> Configured:  # fmt: skip
    layers = _Layers()

    def take(table: dict[str, object], shown: str) -> None:
        context = table.get("context")
        if context is None:
            return
        if not isinstance(context, dict):
            layers.skips.append(ConfigSkip(shown, "its context is not an object"))
            return
        if "fileName" not in context:
            return
        try:
            names = _names(context["fileName"], "context.fileName")
        except _Skipped as skip:
            layers.skips.append(ConfigSkip(shown, skip.reason))
            return
        if names:
            layers.values["fileName"] = (names, shown)

    where = homes.gemini_settings()
    if where is not None:
        path, shown = where
        try:
            raw = reads.home(path)
            if raw is not None:
                take(reads.decode(path, raw, "JSON"), shown)
        except _Skipped as skip:
            layers.skips.append(ConfigSkip(shown, skip.reason))
    rel = join(project_root, ".gemini/settings.json")
    try:
        raw = reads.project(root, rel, reader)
        if raw is not None:
            take(reads.decode(rel, raw, "JSON"), rel)
    except _Skipped as skip:
        layers.skips.append(ConfigSkip(rel, skip.reason))
    said: list[str] = []
    update: dict[str, object] = {}
    found = layers.values.get("fileName")
    if found is not None:
        names, shown = found
        assert isinstance(names, tuple)
        update["sources"] = tuple(
            spec.model_copy(update={"names": names}) if isinstance(spec, FileRule) else spec
            for spec in profile.sources
        )
        said.append(f"context.fileName {', '.join(names)} from {shown}")
    said.extend(_skip_text(skip, "Gemini CLI") for skip in layers.skips)
    configured = profile.model_copy(update=update) if update else profile
    return Configured(configured, tuple(said), tuple(layers.skips))


def _skip_text(skip: ConfigSkip, agent: str) -> str:
    return f"{skip.shown} is passed over ({skip.reason}): {agent}'s defaults are used for it"


def configure(
    profile: Profile,
    homes: AgentHomes | None,
    root: str,
    levels: tuple[str, ...],
    reader: FileReader,
    reads: ConfigReads | None = None,
) -> Configured:
    """`profile` as its agent is configured (user files only with `homes`), for the
    workspace-relative `levels` from the project root to the target's directory. `reads`:
    files already read in this moment."""
    homes = homes or AgentHomes()
    reads = reads or ConfigReads()
    if profile.agent == "codex":
        return configure_codex(profile, homes, root, levels, reader, reads)
    if profile.agent == "gemini":
        return configure_gemini(profile, homes, root, levels[0], reader, reads)
    return Configured(profile)


CONFIG_FILES: Final = (".codex/config.toml", ".gemini/settings.json")
"""The agents' project settings files, workspace-relative at any level."""


def configured_names(homes: AgentHomes | None, root: str, reader: FileReader) -> tuple[str, ...]:
    """The file names the agents' settings add for a project at `root` (Codex's fallbacks,
    Gemini's `context.fileName`), beyond the profiles' own: what an editor should watch too."""
    names: list[str] = []
    for agent in ("codex", "gemini"):
        default = load_profile(agent)
        configured = configure(default, homes, root, (".",), reader).profile
        own = {n for spec in default.sources if isinstance(spec, FileRule) for n in spec.names}
        for spec in configured.sources:
            if isinstance(spec, FileRule):
                names.extend(n for n in spec.names if n not in own and n not in names)
    return tuple(names)


def home_config_files(homes: AgentHomes | None) -> tuple[str, ...]:
    """The absolute paths of the agents' user settings files (watched by an editor)."""
    if homes is None:
        return ()
    found = (homes.codex_config(), homes.gemini_settings())
    return tuple(where[0] for where in found if where is not None)
