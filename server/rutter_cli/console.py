"""The console every command prints to people with: tables that fit the terminal, plain text
when the output is not a terminal.

- On a terminal, a table is printed only if every column can be as wide as its longest word (a
  path, an ID): rich would otherwise break words in the middle (`workspace-roo` / `t`). When
  the terminal is too narrow for that, each row is printed as a short block of `header: value`
  lines, wrapped between words to the terminal's width.
- Elsewhere (a pipe, a file, `make demo | less`) nothing depends on a width: text is never
  wrapped, and a table is plain columns separated by spaces, without boxes or trailing spaces.

Either way, every string printed (a table's cells included) shows the characters a person
cannot see or that change what they see (control, bidirectional and invisible characters:
`rutter_core.kernel.text`) as `<U+XXXX>`, never raw: text stored before those were refused, or
text that may hold them (instruction files, messages), cannot reorder or hide what is printed.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, Final

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from rutter_core.kernel.text import visible

UNWRAPPED_WIDTH: Final = 10_000
"""The page width off a terminal: wide enough that nothing a command prints is wrapped."""


def make_console() -> Console:
    """A console for the CLI's human output (see the module docstring)."""
    if Console().is_terminal:
        return FittingConsole(highlight=False)
    return PlainConsole(highlight=False, width=UNWRAPPED_WIDTH, soft_wrap=True)


class VisibleConsole(Console):
    """A console that prints no character a person cannot see raw (see the module docstring)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Every string rich prints or lays out (cells, `out`, measuring) becomes text here.
        return super().render_str(visible(text), **kwargs)


def _plain(cell: Any) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return Text.from_markup(visible(cell)).plain
    return str(cell)


def _rows(table: Table) -> list[list[str]]:
    columns = [[_plain(cell) for cell in column.cells] for column in table.columns]
    return [list(row) for row in zip(*columns, strict=True)] if columns else []


def _longest_word(texts: list[str]) -> int:
    return max((len(word) for text in texts for word in text.split()), default=0)


class FittingConsole(VisibleConsole):
    """A terminal console whose tables never break a word (see the module docstring)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if len(objects) == 1 and isinstance(objects[0], Table):
            self._print_table(objects[0], **kwargs)
            return
        super().print(*objects, **kwargs)

    def _print_table(self, table: Table, **kwargs: Any) -> None:
        for column in table.columns:
            cells = [_plain(cell) for cell in column.cells]
            words = _longest_word([*cells, _plain(column.header)])
            column.min_width = max(column.min_width or 0, words)
        # Measured on an unbounded page: a measurement is clamped to the width it is given.
        unbounded = self.options.update_width(UNWRAPPED_WIDTH)
        needed = Measurement.get(self, unbounded, table).minimum
        if needed <= self.width:
            super().print(table, **kwargs)
            return
        self._print_blocks(table)

    def _print_blocks(self, table: Table) -> None:
        """Each row as `header  value` lines (a table without headers: its first column is the
        label), wrapped between words."""
        rows = _rows(table)
        if table.show_header:
            headers = [_plain(column.header) for column in table.columns]
            blocks = [list(zip(headers, row, strict=True)) for row in rows]
        else:  # a list of fields: one block
            blocks = [[(row[0], " ".join(row[1:])) for row in rows]]
        label_width = max((len(label) for block in blocks for label, _ in block), default=0)
        for number, block in enumerate(blocks):
            if number:
                self.out("")
            for header, value in block:
                prefix = f"{header:<{label_width}}  " if header else ""
                lines = value.splitlines() or [""]
                for index, line in enumerate(lines):
                    wrapped = textwrap.wrap(
                        line,
                        width=max(self.width - len(prefix), 20),
                        break_long_words=False,
                        break_on_hyphens=False,
                    ) or [""]
                    for part_index, part in enumerate(wrapped):
                        lead = prefix if index == 0 and part_index == 0 else " " * len(prefix)
                        self.out(f"{lead}{part}".rstrip(), highlight=False)


class PlainConsole(VisibleConsole):
    """Off a terminal: unwrapped text, and tables as plain space-separated columns."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if len(objects) == 1 and isinstance(objects[0], Table):
            table = objects[0]
            table.box = None
            table.show_lines = False
            table.show_edge = False
            table.pad_edge = False
            table.expand = False
            with self.capture() as captured:
                super().print(table, **kwargs)
            lines = [line.rstrip() for line in captured.get().splitlines()]
            self.file.write("".join(f"{line}\n" for line in lines))
            return
        super().print(*objects, **kwargs)


def terminal_width() -> int | None:
    """The width to wrap prose at: the terminal's (COLUMNS wins), or None off a terminal."""
    console = Console()
    if not console.is_terminal:
        return None
    columns = os.environ.get("COLUMNS")
    return int(columns) if columns and columns.isdigit() else console.width
