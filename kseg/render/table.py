"""Human summaries as ``rich`` tables when stdout is a terminal; nothing when it is piped (the plain
lines stay the output for scripts).  ``KSEG_TABLES=1`` forces tables, ``KSEG_TABLES=0`` turns them off.
rich is imported only when a table is drawn."""

from __future__ import annotations

import io
import os


def wanted(out) -> bool:
    forced = os.environ.get("KSEG_TABLES")
    if forced is not None:
        return forced not in ("", "0")
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def write_table(out, title: str, columns: list[str], rows: list[list], numeric_from: int = 1) -> None:
    """``rows`` under ``columns`` (columns from ``numeric_from`` right-aligned), to binary ``out``."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        table.add_column(name, justify="right" if i >= numeric_from else "left")
    for row in rows:
        table.add_row(*(str(v) for v in row))
    buf = io.StringIO()
    Console(
        file=buf, force_terminal=wanted(out) and os.environ.get("KSEG_TABLES") is None, width=120, color_system=None
    ).print(table)
    out.write(buf.getvalue().encode("utf-8", "replace"))
    out.flush()
