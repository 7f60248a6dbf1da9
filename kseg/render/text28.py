"""Kafka 2.8's record line: the batch's fields on every record (``kseg dump --kafka-version 2.8``).

``core/src/main/scala/kafka/tools/DumpLogSegments.scala`` at 2.8 (``3893458``), ``dumpLog``:271-284
prints, for each record of a deep iteration::

    | offset: O isValid: V crc: C keySize: K valueSize: S <TimestampType>: T baseOffset: B lastOffset: L
      baseSequence: BS lastSequence: LS producerEpoch: E partitionLeaderEpoch: P batchSize: N magic: M
      compressType: CT position: POS

(one line), then `` sequence: s headerKeys: [..]`` for a v2 batch or `` crc: C isvalid: V`` for a legacy
one, then the control record's text and the key and payload as later releases do.  ``isValid`` and
``crc`` are the record's (``Record.isValid``/``checksumOrNull``: ``true``/``null`` for a v2 record, which
has no checksum of its own); the rest are the shallow batch's accessors (``FileChannelRecordBatch``): a
legacy entry's ``baseOffset`` is its first inner record's offset (``AbstractLegacyRecordBatch.baseOffset``),
its sequences, producer epoch and leader epoch -1; ``compressType`` and the batch line's ``compresscodec``
are ``CompressionType``'s enum name (``NONE``, ``GZIP``, ...: 3.0 printed ``.name``, lower case);
``POS`` is the batch's position in the file.
"""

from __future__ import annotations

import functools
import re

from kseg.format import v2
from kseg.format.compression import codec_name
from kseg.render.record_line import Decoder, decoded_line, key_payload, record_line


#: The head of kseg's (3.0+) record line: ``| offset: O <TimestampType>: T keySize: K valueSize: S``.
@functools.cache  # (compiled for Kafka 2.8's text only)
def _head() -> re.Pattern[str]:
    return re.compile(r"\| offset: (-?\d+) (\w+): (-?\d+) keySize: (-?\d+) valueSize: (-?\d+)")


def enum_codec(codec_id: int) -> str:
    """``CompressionType.toString()`` of 2.8: the enum constant's name."""
    return codec_name(codec_id).upper()


def v2_batch_fields(b, position: int) -> str:
    """The batch part of a v2 record's line (``baseOffset`` ... ``position``)."""
    h = b.h
    bo, delta, base_seq = h[v2.BASE_OFFSET], h[v2.LAST_OFFSET_DELTA], h[v2.BASE_SEQUENCE]
    return (
        f"baseOffset: {bo} lastOffset: {v2.last_offset(bo, delta)} baseSequence: {base_seq} "
        f"lastSequence: {v2.last_sequence(base_seq, delta)} producerEpoch: {h[v2.PRODUCER_EPOCH]} "
        f"partitionLeaderEpoch: {h[v2.LEADER_EPOCH]} batchSize: {b.size} magic: {h[v2.MAGIC]} "
        f"compressType: {enum_codec(h[v2.ATTRIBUTES] & v2.CODEC_MASK)} position: {position}"
    )


def legacy_batch_fields(b, base_offset: int, position: int) -> str:
    """The batch part of a legacy record's line; ``base_offset`` is the entry's first inner offset."""
    return (
        f"baseOffset: {base_offset} lastOffset: {b.offset} baseSequence: -1 lastSequence: -1 "
        f"producerEpoch: -1 partitionLeaderEpoch: -1 batchSize: {b.size} magic: {b.magic} "
        f"compressType: {enum_codec(b.codec)} position: {position}"
    )


def v2_line(line: str, batch_fields: str) -> str:
    """kseg's 3.0+ line of a v2 record rewritten as 2.8 prints it."""
    m = _head().match(line)
    if m is None:  # --skip-record-metadata: no head to rewrite
        return line
    o, ts_type, ts, ks, vs = m.groups()
    return (
        f"| offset: {o} isValid: true crc: null keySize: {ks} valueSize: {vs} {ts_type}: {ts} "
        f"{batch_fields}{line[m.end() :]}"
    )


def legacy_line(rec, ts_type: str, batch_fields: str, key_text: str | None, payload_text: str | None) -> str:
    """The line of a v0/v1 record as 2.8 prints it."""
    key, value = rec.key, rec.value
    valid = "true" if rec.valid else "false"
    return (
        f"| offset: {rec.offset} isValid: {valid} crc: {rec.crc} "
        f"keySize: {-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)} "
        f"{ts_type}: {rec.timestamp} {batch_fields} crc: {rec.crc} isvalid: {valid}"
        f"{key_payload(key_text, payload_text)}\n"
    )


def v2_lines(
    b, position: int, ts_type: str, records: list, key_decoder: Decoder | None, value_decoder: Decoder | None
) -> list[str]:
    """The lines of a chunk of a v2 batch's records (as :meth:`kseg.render.text.TextSink.v2_records` gets
    them: sizes without decoders, slices with) as 2.8 prints them."""
    fields = v2_batch_fields(b, position)
    lines = []
    for o, ts, seq, k, v, hs in records:
        if key_decoder is None or value_decoder is None:
            line = record_line(ts_type, o, ts, seq, k, v, hs, None, None, None)
        else:
            line = decoded_line(ts_type, o, ts, seq, k, v, hs, key_decoder, value_decoder)
        lines.append(v2_line(line, fields))
    return lines
