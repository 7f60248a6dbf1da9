"""Coverage-guided fuzzing of the format layer with atheris (see README.md in this folder).

Any exception other than a :class:`kseg.errors.KsegError` is a finding.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

from tests.stores import local

with atheris.instrument_imports():
    from kseg.errors import KsegError
    from kseg.format.indexes import OffsetIndexView, TimeIndexView, iter_aborted_txns
    from kseg.format.snapshot import parse_snapshot
    from kseg.storage.records import FileRecords

_TMP = tempfile.NamedTemporaryFile(suffix=".log", delete=False)


def one_input(data: bytes) -> None:
    with open(_TMP.name, "wb") as f:
        f.write(data)
    try:
        with FileRecords(_TMP.name, window=1 << 16, store=local()) as records:
            for batch in records.batches():
                batch.is_valid()
                for _ in batch.records(1 << 20):
                    pass
    except KsegError:
        pass
    for parse in (
        lambda: OffsetIndexView(data, 0).sanity_check(),
        lambda: TimeIndexView(data, 0).sanity_check(),
        lambda: list(iter_aborted_txns(data)),
        lambda: parse_snapshot(data),
    ):
        try:
            parse()
        except KsegError:
            pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, one_input)
    try:
        atheris.Fuzz()
    finally:
        os.unlink(_TMP.name)
