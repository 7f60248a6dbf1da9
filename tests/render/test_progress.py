"""The progress bar in a real pseudo-terminal (issue 20): it moves inside a segment, by bytes read, with
rate and ETA, for every long command; on the terminal whether stdout is redirected or not (results print
above the bar); nothing with ``-q`` or when stderr is not a terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA

LARGE = CORPUS_DATA / "large-v2-0"  # one 3.2 MB segment: ~0.8 s at --max-rate 4 (4 MB/s)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COUNT = re.compile(r"(\d+\.\d) ?/ ?(\d+\.\d) MB")


def _run_on_pty(args: list[str], stdout_path: Path | None, cwd: Path | None = None) -> tuple[int, str]:
    """``kseg ARGS`` (in ``cwd``) with stderr (and stdout unless ``stdout_path``) on a pseudo-terminal; what
    the terminal showed, escape sequences removed."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("KSEG_PROGRESS", "KSEG_NO_PROGRESS", "KSEG_TABLES")}
    env.update(COLUMNS="140", TERM="xterm")
    out = open(stdout_path, "wb") if stdout_path else None
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "kseg", *args],
            stdin=slave,
            stdout=out or slave,
            stderr=slave,
            env=env,
            close_fds=True,
            cwd=cwd,
        )
    finally:
        os.close(slave)
        if out:
            out.close()
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed (Linux: EIO)
                break
            if not chunk:
                break
            shown += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=60), ANSI.sub("", shown.decode("utf-8", "replace"))


def _counts(shown: str) -> list[float]:
    """The byte counts the bar showed below its total (MB)."""
    return [float(m.group(1)) for m in COUNT.finditer(shown) if 0 < float(m.group(1)) < float(m.group(2)) - 0.05]


SLOWED = [
    ["verify-index"],
    ["rebuild-index", "--check"],
    ["txn"],
    ["compaction"],
    ["export", "-o", "{tmp}/o.parquet"],
    ["diff", "{large}", "{tmp}/copy"],
    ["salvage", "-o", "{tmp}/salvaged/large-0"],
    ["salvage", "--dry-run"],
]


#: the other runs at --max-rate 4 on a pseudo-terminal, started with SLOWED's: (args, stdout redirected?)
OTHERS = {
    "results-on-terminal": (["verify-index", "--max-rate", "4", str(LARGE), str(CORPUS_DATA / "plain-v2-0")], False),
    "quiet": (["verify-index", "-q", "--max-rate", "4", str(LARGE)], True),
}


@pytest.fixture(scope="module")
def slowed(tmp_path_factory: pytest.TempPathFactory) -> dict[int | str, tuple[Path, int, str]]:
    """Each command of SLOWED on the large segment at ``--max-rate 4``, results redirected, and each run of
    OTHERS, on its own pseudo-terminal: all at once, each in its own process (they wait on the rate, not on
    a core), so the file waits for the slowest, not for their sum.  By SLOWED's index or OTHERS's name:
    ``(its temporary directory, exit code, what the terminal showed)``."""
    import shutil
    from concurrent.futures import ThreadPoolExecutor

    runs: dict[int | str, tuple[list[str], bool]] = {}
    for n, command in enumerate(SLOWED):
        paths = [] if command[0] == "diff" else [str(LARGE)]
        runs[n] = ([*command, "--max-rate", "4", *paths], True)
    runs.update(OTHERS)
    tmps = {name: tmp_path_factory.mktemp("slowed") for name in runs}
    for tmp in tmps.values():
        shutil.copytree(LARGE, tmp / "copy")

    def run(name: int | str) -> tuple[Path, int, str]:
        command, redirected = runs[name]
        tmp = tmps[name]
        args = [a.replace("{tmp}", str(tmp)).replace("{large}", str(LARGE)) for a in command]
        return (tmp, *_run_on_pty(args, tmp / "stdout.txt" if redirected else None))

    with ThreadPoolExecutor(len(runs)) as pool:
        return dict(zip(runs, pool.map(run, runs), strict=True))


@pytest.mark.parametrize("command", range(len(SLOWED)), ids=[f"command{n}" for n in range(len(SLOWED))])
def test_a_slowed_segment_shows_intermediate_byte_counts(slowed: dict, command: int) -> None:
    tmp_path, code, shown = slowed[command]
    assert code in (0, 1), shown
    counts = _counts(shown)
    assert len(set(counts)) >= 2, shown[-2000:]  # the bar moved inside the one segment, a MiB at a time
    assert "/00000000000000000000.log" in shown  # the file being read
    assert re.search(r"\d+(\.\d+)? ?[kM]B/s", shown) and re.search(r"ETA \d+:\d\d:\d\d", shown)  # rate, ETA
    assert "━" not in (tmp_path / "stdout.txt").read_text()  # the redirected results stay plain


def test_with_stdout_on_the_terminal_results_print_above_the_bar(slowed: dict) -> None:
    _, code, shown = slowed["results-on-terminal"]
    assert code == 0
    assert len(set(_counts(shown))) >= 2
    pieces = re.split(r"[\r\n]", shown)  # the bar redraws its line after a carriage return (and erase)
    # each result is a whole piece, after the bar's line was erased, never torn by it
    assert f"{LARGE}/00000000000000000000: clean (202 batches, 3160362 bytes)" in pieces
    assert f"{CORPUS_DATA / 'plain-v2-0'}/00000000000000000251: clean (16 batches, 22265 bytes)" in pieces
    assert "3 segments verified (3211264 bytes), 3 clean." in pieces


@pytest.mark.parametrize("quiet", [["-q"], []])
def test_no_bar_with_quiet_or_when_stderr_is_not_a_terminal(slowed: dict, quiet: list[str]) -> None:
    if quiet:
        _, code, shown = slowed["quiet"]
        assert code == 0 and "MB" not in shown and "━" not in shown
    else:
        env = {k: v for k, v in os.environ.items() if k not in ("KSEG_PROGRESS",)}
        p = subprocess.run(
            [sys.executable, "-m", "kseg", "verify-index", "--max-rate", "4", str(LARGE)],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert p.returncode == 0 and p.stderr == b""


# -- the listing before any work (kseg.storage.watch -> ListingStatus) -----------------------------------


def test_the_listing_status_counts_from_many_threads() -> None:
    """The listing threads only count (under a lock); the line shows the sums, then is removed."""
    import io
    import threading

    from rich.console import Console

    from kseg.render.progress import ListingStatus

    buf = io.StringIO()
    status = ListingStatus("s3://b/fleet", Console(file=buf, force_terminal=True, width=200))

    def listings() -> None:
        for _ in range(500):
            status.started("s3://b/fleet/b1/data")
            status.finished("s3://b/fleet/b1/data", 1000, 3)

    threads = [threading.Thread(target=listings) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status.started("s3://b/fleet/b2/data")
    line = "listing s3://b/fleet: 2,000 directories listed (1 in progress), 2,000,000 keys, 6,000 partitions"
    assert status.text() == line
    status.close()
    assert line in buf.getvalue()  # drawn a last time when the listing ends, then erased (transient)


def test_the_listing_status_counts_files_on_disk_and_keys_on_a_store() -> None:
    """What was listed is named as the listings say: a file system's files, an object store's keys."""
    import io

    from rich.console import Console

    from kseg.render.progress import ListingStatus

    status = ListingStatus("data", Console(file=io.StringIO(), force_terminal=True, width=200))
    status.started("data")
    status.finished("data", 1, 0, "file")
    assert status.text() == "listing data: 1 directory listed (0 in progress), 1 file, 0 partitions"
    status.started("s3://b/data")
    status.finished("s3://b/data", 3, 1)  # an object store's listing: keys (the default)
    assert status.text() == "listing data: 2 directories listed (0 in progress), 4 files and keys, 1 partition"
    status.close()


def test_a_log_root_shows_its_listing_on_the_terminal(tmp_path: Path) -> None:
    import shutil

    for name in ("orders-0", "orders-1"):
        shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "root" / name)
    # a relative path: the line fits the terminal wherever the temporary directory is (pytest-xdist's are longer)
    code, shown = _run_on_pty(["verify-index", "root"], tmp_path / "stdout.txt", cwd=tmp_path)
    assert code == 0, shown
    # local files are files, not keys (an object store's)
    listing = r"listing (\S+/)?root: 3 directories listed \(0 in progress\), \d+ files, 2 partitions"
    assert re.search(listing, shown), shown
    assert "listing" not in (tmp_path / "stdout.txt").read_text()
    code, shown = _run_on_pty(["verify-index", "-q", str(tmp_path / "root")], tmp_path / "stdout.txt")
    assert code == 0 and "listing" not in shown


def _drawn_lines(width: int) -> list[str]:
    """The byte bar drawn on a terminal ``width`` columns wide, with a long label, sizes in GB and a rate."""
    import io
    import re
    import time

    from rich.console import Console

    from kseg.render.progress import ByteProgress

    buf = io.StringIO()
    bar = ByteProgress(Console(file=buf, width=width, force_terminal=True, color_system=None))
    bar.start("verify-index", 987_654_321_000)
    bar.describe("orders-with-a-long-topic-name-123/00000000000001234567890.log")
    bar.advance_to(123_456_789_000)
    time.sleep(0.3)
    bar.advance_to(223_456_789_000)  # a rate: "333.3 GB/s"
    bar._progress.refresh()
    bar._progress.stop()
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    return [line for line in plain.replace("\r", "\n").split("\n") if line.strip()]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_byte_bar_is_one_line_at_any_width(width: int) -> None:
    """Issue 33: at 80 columns "MB / MB/s" wrapped onto a second line; the label gives way first."""
    last = _drawn_lines(width)[-1]
    assert len(last) <= width
    assert "223.5/987.7 GB" in last and "ETA" in last and "/s" in last
