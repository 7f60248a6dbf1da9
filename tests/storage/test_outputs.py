"""kseg.storage.outputs: an output resolving to an input file, or into an input directory, is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kseg.errors import InputError, UsageError
from kseg.storage.outputs import check_file_target, refuse_on_inputs


def test_outputs_resolving_onto_inputs_are_refused(tmp_path: Path) -> None:
    part = tmp_path / "orders-0"
    part.mkdir()
    log = part / "00000000000000000000.log"
    log.write_bytes(b"")
    (tmp_path / "link").symlink_to(part)
    (tmp_path / "log-link").symlink_to(log)
    for output, inputs in [
        (str(log), [str(part)]),
        (str(log), [str(log)]),
        (str(part), [str(part)]),
        (str(tmp_path / "link" / "new.jsonl"), [str(part)]),
        (str(tmp_path / "log-link"), [str(log)]),
        (str(part / ".." / "orders-0" / "x"), [str(part)]),
        (str(tmp_path / "x"), [str(tmp_path)]),
        ("file://" + str(log), [str(part)]),
    ]:
        with pytest.raises(UsageError, match="never writes over what it reads"):
            refuse_on_inputs(output, inputs, "--report")
    for output, inputs in [
        (str(tmp_path / "orders-0.jsonl"), [str(part)]),  # a sibling sharing the prefix
        (str(tmp_path / "out" / "x"), [str(part), str(log)]),
    ]:
        refuse_on_inputs(output, inputs, "--report")


def test_uris_compare_as_normalised_strings() -> None:
    with pytest.raises(UsageError, match="lies within the input s3://b/data"):
        refuse_on_inputs("S3://b/./data/orders-0/r.jsonl", ["s3://b/data/"], "--report")
    refuse_on_inputs("s3://b/data2/r", ["s3://b/data"], "-o")
    refuse_on_inputs("s3://b/data/r", [os.getcwd()], "-o")  # a URI and a local path never meet


def test_check_file_target(tmp_path: Path) -> None:
    check_file_target(str(tmp_path / "new.parquet"), force=False, option="-o")
    with pytest.raises(InputError, match="no such directory"):
        check_file_target(str(tmp_path / "missing" / "x"), force=True, option="-o")
    with pytest.raises(InputError, match="is a directory"):
        check_file_target(str(tmp_path), force=True, option="-o")
    with pytest.raises(InputError, match="not a regular file"):
        check_file_target("/dev/null", force=True, option="-o")
    (tmp_path / "old").write_bytes(b"x")
    with pytest.raises(InputError, match="give --force"):
        check_file_target(str(tmp_path / "old"), force=False, option="-o")
    check_file_target(str(tmp_path / "old"), force=True, option="-o")
