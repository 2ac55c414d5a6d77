"""Lookups shared by the profile evaluations of one moment (`Memo`), or none (`Fresh`)."""

from __future__ import annotations

import os

from rutter_core.discovery.fsread import FileReader, lstat_or_none
from rutter_core.kernel.errors import RutterError
from rutter_core.profiles.config import AgentHomes, ConfigReads, Configured, configure
from rutter_core.profiles.model import Profile
from rutter_core.profiles.reading import Found, find


class Memo:
    """Lookups shared by the evaluations of one moment (the editor's refresh round, like a
    batch's shared levels in discovery): each path is `lstat`ed and each candidate found once,
    the root's realpath checked once. Reads still verify each file's identity, so a file that
    changed meanwhile is refused, never mixed. Without a memo every lookup is fresh."""

    def __init__(self) -> None:
        self._lstats: dict[str, os.stat_result | None] = {}
        self._found: dict[tuple[str, str], Found | None] = {}
        self._errors: dict[tuple[str, str], RutterError] = {}
        self._configured: dict[tuple[str, str, tuple[str, ...]], Configured] = {}
        self.roots: set[str] = set()
        self._reads = ConfigReads()

    def configure(
        self, profile: Profile, homes: AgentHomes | None, root: str, scopes: tuple[str, ...],
        reader: FileReader,
    ) -> Configured:  # fmt: skip
        """The agent's settings, read once per project and directory chain in a round."""
        key = (profile.agent, root, scopes)
        found = self._configured.get(key)
        if found is None:
            found = configure(profile, homes, root, scopes, reader, self._reads)
            self._configured[key] = found
        return found

    def lstat(self, path: str) -> os.stat_result | None:
        try:
            return self._lstats[path]
        except KeyError:
            st = self._lstats[path] = lstat_or_none(path)
            return st

    def find(self, root: str, rel: str) -> Found | None:
        key = (root, rel)
        if key in self._errors:
            raise self._errors[key]
        try:
            return self._found[key]
        except KeyError:
            pass
        try:
            found = self._found[key] = find(root, rel)
        except RutterError as error:
            self._errors[key] = error
            raise
        return found


class Fresh(Memo):
    """No sharing: every lookup goes to the disk."""

    def lstat(self, path: str) -> os.stat_result | None:
        return lstat_or_none(path)

    def find(self, root: str, rel: str) -> Found | None:
        return find(root, rel)

    def configure(
        self, profile: Profile, homes: AgentHomes | None, root: str, scopes: tuple[str, ...],
        reader: FileReader,
    ) -> Configured:  # fmt: skip
        return configure(profile, homes, root, scopes, reader)
