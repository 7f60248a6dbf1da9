"""The engine's column buffers (:class:`~kseg.ops.export.columns.Columns`) as one Arrow record batch of
the export schema (:mod:`kseg.render.export`), wrapped without a Python object per record: the values
pyarrow would make of the rows :class:`~kseg.render.export.RowBuilder` builds for the same records."""

from __future__ import annotations

from typing import Any

from kseg.format.compression import codec_name
from kseg.ops.export import columns as c
from kseg.ops.export.columns import Columns


def record_batch(cols: Columns, const: tuple, schema, unreadable: bool, repeated: dict):
    """``cols`` as a record batch of ``schema`` (the undecoded columns, ``unreadable`` last when asked):
    ``const`` the split's logDir, topic, partition and segment, repeated on every row; ``repeated`` keeps
    the columns of one value a builder made, by name (sliced for the next batches)."""
    import pyarrow as pa

    n, b = cols.rows, [pa.py_buffer(data) for data in cols.buffers]

    def fixed(kind, at: int, valid: int | None = None):
        return pa.Array.from_buffers(kind, n, [None if valid is None else b[valid], b[at]])

    def binary(kind, offsets: int, data: int, valid: int | None, length: int = n):
        return pa.Array.from_buffers(kind, length, [None if valid is None else b[valid], b[offsets], b[data]])

    header_type = schema.field("headers").type
    entry = header_type.value_type
    entries = pa.StructArray.from_arrays(
        [
            binary(pa.string(), c.HEADER_KEY_OFFSETS, c.HEADER_KEY, None, cols.headers),
            binary(pa.binary(), c.HEADER_VALUE_OFFSETS, c.HEADER_VALUE, c.HEADER_VALUE_VALID, cols.headers),
        ],
        fields=list(entry),
    )
    timestamp = fixed(pa.timestamp("ms", tz="UTC"), c.TIMESTAMP, c.TIMESTAMP_VALID)
    if timestamp.type != schema.field("timestamp").type:  # Spark's microseconds
        timestamp = timestamp.cast(schema.field("timestamp").type)
    by_name: dict[str, Any] = {
        "offset": fixed(pa.int64(), c.OFFSET),
        "timestamp": timestamp,
        "timestampMs": fixed(pa.int64(), c.TIMESTAMP),
        "timestampType": binary(pa.string(), c.TIMESTAMP_TYPE_OFFSETS, c.TIMESTAMP_TYPE, None),
        "key": binary(pa.binary(), c.KEY_OFFSETS, c.KEY, c.KEY_VALID),
        "value": binary(pa.binary(), c.VALUE_OFFSETS, c.VALUE, c.VALUE_VALID),
        "headers": pa.Array.from_buffers(header_type, n, [None, b[c.HEADERS_OFFSETS]], children=[entries]),
        "sequence": fixed(pa.int32(), c.SEQUENCE),
        "batchPosition": fixed(pa.int64(), c.POSITION),
        "baseOffset": fixed(pa.int64(), c.BASE_OFFSET),
        "lastOffset": fixed(pa.int64(), c.LAST_OFFSET),
        "magic": 2,  # the engine reads v2 batches only
        "compression": codec_name(0),  # ... uncompressed ones
        "producerId": fixed(pa.int64(), c.PRODUCER_ID),
        "producerEpoch": fixed(pa.int32(), c.PRODUCER_EPOCH),
        "baseSequence": fixed(pa.int32(), c.BASE_SEQUENCE),
        "partitionLeaderEpoch": fixed(pa.int32(), c.LEADER_EPOCH),
        "isTransactional": pa.Array.from_buffers(pa.bool_(), n, [None, b[c.TRANSACTIONAL]]),
        "isControl": False,  # ... data batches
        "aborted": False,  # ... read while no aborted transaction is pending
        "crcValid": True,  # ... whose CRC matched
        "corruption": None,
        "unreadable": None,
    }
    by_name.update(zip(("logDir", "topic", "partition", "segment"), const, strict=True))
    arrays = []
    for field in schema:
        value = by_name[field.name]
        if not isinstance(value, pa.Array):
            value = repeated.get(field.name)
            if value is None or len(value) < n:
                value = repeated[field.name] = _repeat(pa, by_name[field.name], field.type, max(n, 1 << 12))
            value = value.slice(0, n)
        arrays.append(value)
    assert len(arrays) == len(schema) and unreadable == ("unreadable" in schema.names)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _repeat(pa, value, kind, n: int):
    """``value`` on ``n`` rows (a null column when None)."""
    if value is None:
        return pa.nulls(n, kind)
    return pa.repeat(pa.scalar(value, kind), n)
