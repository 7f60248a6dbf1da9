"""Every numeric option is checked at parse time (issue 19): out of range, infinite or not a number is a
usage error, exit 2, before any read -- never an ``OverflowError`` traceback or a sleep without end."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS_DATA, assert_no_traceback, run_subprocess

P = str(CORPUS_DATA / "plain-v2-0")
LOG = str(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log")
HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "args, why",
    [
        (["verify-index", "--max-rate", "1e-12", P], "'--max-rate': 1e-12 is not in the range 0.01<=x<=1000000.0"),
        (["lookup-offset", "--max-rate", "1e-12", "5", P], "'--max-rate': 1e-12 is not in the range"),
        (["lookup-time", "--max-rate", "1e-12", "earliest", P], "'--max-rate': 1e-12 is not in the range"),
        (["dump", "--max-rate", "1e-12", LOG], "'--max-rate': 1e-12 is not in the range"),
        (["txn", "--max-rate", "1e-12", P], "'--max-rate': 1e-12 is not in the range"),
        (["compaction", "--max-rate", "1e-12", P], "'--max-rate': 1e-12 is not in the range"),
        (["rebuild-index", "--check", "--max-rate", "1e-12", P], "'--max-rate': 1e-12 is not in the range"),
        (["verify-index", "--max-rate", "inf", P], "'--max-rate': inf is not in the range"),
        (["verify-index", "--max-rate", "nan", P], "'--max-rate': 'nan' is not a number"),
        (["verify-index", "--max-rate", "0", P], "'--max-rate': 0.0 is not in the range"),
        (
            ["verify-index", "--max-message-size", HUGE, P],
            "'--max-message-size': 99999999999999999999 is not in the range",
        ),
        (
            ["dump", "--max-bytes", HUGE, LOG],
            "'--max-bytes': 99999999999999999999 is not in the range 0<=x<=2147483647",
        ),
        (["rebuild-index", "--check", "--index-interval-bytes", HUGE, P], "is not in the range 0<=x<=2147483647"),
        (["rebuild-index", "--check", "--max-index-bytes", HUGE, P], "is not in the range 12<=x<=2147483647"),
        (
            ["export", "-o", "x.parquet", "--from-offset", HUGE + "000", P],
            "'--from-offset': 99999999999999999999000 is not in the range",
        ),
        (["export", "-o", "x.parquet", "--split-bytes", HUGE, P], "'--split-bytes': 99999999999999999999 is not in"),
        (["txn", "--hanging-after", HUGE + "d", P], "is beyond a 64-bit count of milliseconds"),
        (["compaction", "--delete-retention", HUGE + "d", P], "is beyond a 64-bit count of milliseconds"),
        (["verify-index", "--jobs", "0", P], "'--jobs' / '-j': 0 is not in the range x>=1"),
    ],
)
def test_a_numeric_option_out_of_range_is_a_usage_error(tmp_path, args: list[str], why: str) -> None:
    r = run_subprocess(args, cwd=tmp_path, timeout=30)
    assert r.exit_code == 2, r.errtext
    assert r.stdout == b"" and why in r.errtext, r.errtext
    assert_no_traceback(r)
    assert list(tmp_path.iterdir()) == []


def test_the_smallest_rate_is_accepted_and_paces(tmp_path) -> None:
    r = run_subprocess(["verify-index", "--max-rate", "1", P], timeout=30)
    assert r.exit_code == 0 and r.text.splitlines()[-1] == "2 segments verified (50902 bytes), 2 clean.", r.errtext
