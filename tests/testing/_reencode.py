"""Re-encode parsed corpus batches with kseg's writer (the writer's inputs, recovered)."""

from __future__ import annotations

from kseg.testing.writer import RecordSpec, build_legacy, build_v2_batch, set_legacy_max_timestamp

from ._kparse import LegacyEntry, V2Batch, legacy_inner, parse_legacy, parse_v2


def v2_specs(b: V2Batch) -> list[RecordSpec]:
    return [
        RecordSpec(r.key, r.value, b.base_timestamp + r.timestamp_delta, tuple(r.headers), r.offset_delta)
        for r in b.records
    ]


def reencode_v2(raw: bytes, codec: str | None = None) -> bytes:
    """Build the same batch again from its parsed fields (optionally with another codec)."""
    b = parse_v2(raw)
    lat = bool(b.attributes & 0x08)
    horizon = b.base_timestamp if b.attributes & 0x40 else None
    last_delta = b.records[-1].offset_delta if b.records else 0
    return build_v2_batch(
        v2_specs(b),
        base_offset=b.base_offset,
        codec=b.codec if codec is None else codec,
        timestamp_type="LogAppendTime" if lat else "CreateTime",
        log_append_time=b.max_timestamp if lat else None,
        producer_id=b.producer_id,
        producer_epoch=b.producer_epoch,
        base_sequence=b.base_sequence,
        partition_leader_epoch=b.leader_epoch,
        transactional=bool(b.attributes & 0x10),
        control=bool(b.attributes & 0x20),
        delete_horizon_ms=horizon,
        last_offset_delta=None if b.last_offset_delta == last_delta else b.last_offset_delta,
    )


def _ts_type(e: LegacyEntry) -> str:
    return "LogAppendTime" if e.magic == 1 and e.attributes & 0x08 else "CreateTime"


def reencode_legacy(raw: bytes) -> bytes:
    """Build the same legacy entry again.

    Uncompressed entries go through ``build_legacy`` directly.  A wrapper is
    rebuilt from its inner records (offsets, timestamps); when the wrapper is
    LogAppendTime but its inner records are CreateTime, it was the broker's
    in-place ``setMaxTimestamp`` -- replayed with ``set_legacy_max_timestamp``.
    """
    e = parse_legacy(raw)
    if e.codec == "none":
        return build_legacy(
            [RecordSpec(e.key, e.value, e.timestamp if e.timestamp is not None else -1)],
            magic=e.magic,
            base_offset=e.offset,
            timestamp_type=_ts_type(e),
            log_append_time=e.timestamp,
        )
    wrapper, _inner, entries = legacy_inner(raw)
    if e.magic == 1:
        base = wrapper.offset - entries[-1].offset  # relative inner offsets
        deltas = [x.offset for x in entries]
    else:
        base = entries[0].offset  # absolute inner offsets
        deltas = [x.offset - base for x in entries]
    specs = [
        RecordSpec(x.key, x.value, x.timestamp if x.timestamp is not None else -1, (), d)
        for x, d in zip(entries, deltas, strict=True)
    ]
    inner_type = _ts_type(entries[0])
    built = build_legacy(
        specs,
        magic=e.magic,
        base_offset=base,
        codec=e.codec,
        timestamp_type=inner_type,
        log_append_time=wrapper.timestamp if inner_type == "LogAppendTime" else None,
    )
    if _ts_type(wrapper) != inner_type:
        built = set_legacy_max_timestamp(built, _ts_type(wrapper), wrapper.timestamp)
    return built
