"""``kseg grep`` on compressed batches: a batch whose decompressed bytes lack the searched bytes is passed
over without its records decoded (every codec), one holding them is decoded and its matches found; a batch
that fails to decompress is said either way."""

from __future__ import annotations

import pytest

from kseg.storage import batch as batches
from kseg.testing.writer import RecordSpec, build_v2_batch, write_partition
from tests.conftest import CORPUS_DATA, run_cli

T0 = 1_750_000_000_000


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_batches_lacking_the_bytes_are_not_decoded(tmp_path, monkeypatch, codec: str) -> None:
    part = tmp_path / "c-0"
    appends = [
        [
            build_v2_batch(
                [RecordSpec(b"k-%d-%d" % (b, i), b"v" * 50, T0 + i) for i in range(20)], base_offset=b * 20, codec=codec
            )
        ]  # fmt: skip
        for b in range(5)
    ]
    write_partition(part, appends)
    decoded = []
    real = batches.V2Batch.form_chunks

    def counted(self, *args, **kwargs):
        decoded.append(self.base_offset)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(batches.V2Batch, "form_chunks", counted)
    r = run_cli(["grep", "--count", "--key", "k-3-7", str(part)])
    assert (r.exit_code, r.text) == (0, f"{part}: 1 match\n"), r.errtext
    assert decoded == [60]  # the one batch holding the key
    decoded.clear()
    r = run_cli(["grep", "--key", "no-such-key", str(part)])
    assert r.exit_code == 1 and decoded == [] and "kseg: no match (1 partition" in r.errtext


def test_a_batch_that_fails_to_decompress_is_said() -> None:
    r = run_cli(["grep", "--key", "no-such-key", str(CORPUS_DATA / "corrupt-compressed-0")])
    assert r.exit_code == 1
    assert "records: batch at offset 36: failed to decompress record stream (gzip)" in r.errtext
    assert "no match in what was read" in r.errtext
