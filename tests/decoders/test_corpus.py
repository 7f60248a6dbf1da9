"""Decoders against the goldens of Kafka's real tool (tests/data/corpus).

Each record's key/value bytes come from the corpus segment (written by Kafka's
own classes); the expected text is the golden line for that offset.
"""

from __future__ import annotations

import struct

import pytest

from kseg.decoders import parser_for
from kseg.decoders.control import control_record_text
from tests.decoders.conftest import corpus_records, golden_record_lines


def _tail(key: str | None, payload: str | None) -> str:
    text = ""
    if key is not None:
        text += f" key: {key}"
    if payload is not None:
        text += f" payload: {payload}"
    return text


@pytest.mark.parametrize(
    "decoder, corpus, tail_from, records",
    [
        # every data record of the segment, incl. tombstones, type 99, a bad value
        ("offsets", "offsets_corpus", " key: ", 15),
        ("cluster-metadata", "metadata_corpus", " payload: ", 10),
    ],
)
def test_decoder_matches_every_golden_line(request, decoder: str, corpus: str, tail_from: str, records: int) -> None:
    recs, golden = request.getfixturevalue(corpus)
    parser = parser_for(decoder)
    checked = 0
    for rec in recs:
        if rec.control:
            continue
        line = golden[rec.offset]
        head = line.split(tail_from, 1)[0]
        assert head + _tail(*parser.parse(rec.offset, rec.key, rec.value)) == line
        checked += 1
    assert checked == records


def test_offsets_golden_covers_the_interesting_cases(offsets_corpus) -> None:
    _, golden = offsets_corpus
    assert '"subscription":{"topics":["orders","payments"]' in golden[0]  # consumer protocol expanded
    assert '"subscription":"AQID","assignment":"BAU="' in golden[1]  # connect: bytes kept as base64
    assert golden[11].endswith("payload: <DELETE>")
    assert golden[14].endswith("key: Unknown record type 99 at offset 14, skipping.")
    assert golden[15].endswith("Could not read record with version 3 from value's buffer due to: null.")


def test_kraft_control_records_match_deep_golden() -> None:
    golden = golden_record_lines("__cluster_metadata-0", "deep")
    seen = {}
    for rec in corpus_records("__cluster_metadata-0"):
        if not rec.control:
            continue
        type_id = struct.unpack(">h", rec.key[2:4])[0]
        text = control_record_text(type_id, rec.key, rec.value)
        seen[type_id] = text
        if text is not None:
            assert golden[rec.offset].endswith(" headerKeys: []" + text)
    assert seen[5] == ' KRaftVersion {"version":0,"kRaftVersion":1}'
    assert seen[6].startswith(
        ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ"'
    )
    assert seen[2] is None  # LEADER_CHANGE: the core prints controlType: LEADER_CHANGE(2)
