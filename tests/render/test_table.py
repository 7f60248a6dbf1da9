"""Terminal tables (:mod:`kseg.render.table`): drawn when wanted, plain lines otherwise."""

from __future__ import annotations

import io

from kseg.render.table import wanted, write_table


class _Tty(io.BytesIO):
    def isatty(self) -> bool:
        return True


def test_wanted_follows_the_terminal_and_kseg_tables(monkeypatch) -> None:
    monkeypatch.delenv("KSEG_TABLES", raising=False)
    assert wanted(_Tty()) and not wanted(io.BytesIO()) and not wanted(object())
    monkeypatch.setenv("KSEG_TABLES", "1")
    assert wanted(io.BytesIO())
    monkeypatch.setenv("KSEG_TABLES", "0")
    assert not wanted(_Tty())


def test_a_table_has_its_title_columns_and_right_aligned_numbers(monkeypatch) -> None:
    monkeypatch.setenv("KSEG_TABLES", "1")
    out = io.BytesIO()
    write_table(out, "files", ["partition", "segments"], [["orders-0", 3], ["t-12", 120]])
    lines = out.getvalue().decode().splitlines()
    assert lines[0].rstrip() == "files"  # the title, left-justified over the table
    body = [line for line in lines if "orders-0" in line or "t-12" in line]
    assert len(body) == 2
    # numbers right-aligned: the last digit of 3 under the last digit of 120
    assert body[0].index("3 ") == body[1].index("120 ") + 2
    assert body[0].index("orders-0") == body[1].index("t-12")  # names left-aligned
