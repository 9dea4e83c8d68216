"""The plain-text tables the CLI prints and the MCP tools return (``workers.tables``)."""

from __future__ import annotations

import pytest

from workers.tables import render_table


def test_columns_align_to_their_widest_cell_and_lines_end_without_padding() -> None:
    text = render_table(["id", "title", "due"], [["t1", "Auth migration", ""], ["t22", "Docs", "2026-03-01"]])
    assert text.splitlines() == [
        "ID   TITLE           DUE",
        "t1   Auth migration",
        "t22  Docs            2026-03-01",
    ]


def test_a_width_cuts_long_cells_with_an_ellipsis_and_none_keeps_every_word() -> None:
    long = "word " * 30
    assert render_table(["text"], [[long]], width=10).splitlines()[1] == "word word…"
    assert render_table(["text"], [[long]], width=None).splitlines()[1] == long.rstrip()


def test_no_rows_is_the_header_alone() -> None:
    assert render_table(["id", "status"], []) == "ID  STATUS"


def test_a_row_with_the_wrong_number_of_cells_is_refused() -> None:
    with pytest.raises(ValueError, match="2 cells"):
        render_table(["id", "status"], [["t1"]])
