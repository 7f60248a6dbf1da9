"""kseg's Kafka log writer: a public API for testing Kafka tooling (``docs/testing-api.md``); the CLI never imports it.

Everything here produces bytes exactly as Apache Kafka's Java classes do
(``MemoryRecordsBuilder``, ``DefaultRecordBatch``, ``LegacyRecord``,
``LogSegment``, ``ProducerStateManager``); each module states the schema
it writes and the class it mirrors:

* :mod:`kseg.testing.v2`        magic-2 batches
* :mod:`kseg.testing.control`   control batches (transaction markers, KRaft)
* :mod:`kseg.testing.legacy`    magic-0/1 message sets and wrappers
* :mod:`kseg.testing.codecs`    gzip / xerial snappy / Kafka LZ4 frame / zstd
* :mod:`kseg.testing.framing`   batch walking and the broker's in-place edits
* :mod:`kseg.testing.segment`   ``.log`` + ``.index`` + ``.timeindex`` + ``.txnindex``
* :mod:`kseg.testing.partition` rolled segments, ``.snapshot`` files
* :mod:`kseg.testing.appendinfo` what older brokers passed to ``LogSegment.append``
* :mod:`kseg.testing.bulk`      fast large segments for benchmarks

This module is the public facade: import names from here; ``__all__`` is
the supported API (stable within a major version).
"""

from __future__ import annotations

from kseg.testing.appendinfo import AppendInfo, cleaner_append_info, leader_append_info
from kseg.testing.bulk import BulkResult, bulk_template, write_bulk_segment
from kseg.testing.codecs import (
    compress,
    gzip_compress,
    lz4_compress,
    lz4_frame_header,
    snappy_compress,
    xxh32,
    zstd_compress,
)
from kseg.testing.control import (
    CONTROL_TYPES,
    build_control_batch,
    build_control_record_batch,
    end_txn_marker_value,
)
from kseg.testing.framing import (
    BatchInfo,
    batch_info,
    iter_batch_bytes,
    iter_batch_infos,
    set_last_offset,
    set_max_timestamp,
    set_partition_leader_epoch,
)
from kseg.testing.legacy import build_legacy, encode_entry, encode_message, set_legacy_max_timestamp
from kseg.testing.partition import (
    ProducerEntry,
    ProducerState,
    java_hashmap_order,
    snapshot_bytes,
    write_partition,
    write_snapshot,
)
from kseg.testing.segment import SegmentWriter, segment_file_name, write_segment
from kseg.testing.v2 import RecordSpec, append_record, build_empty_v2_batch, build_v2_batch, encode_record, varint

__all__ = [
    "AppendInfo",
    "cleaner_append_info",
    "leader_append_info",
    "BatchInfo",
    "BulkResult",
    "CONTROL_TYPES",
    "ProducerEntry",
    "ProducerState",
    "RecordSpec",
    "SegmentWriter",
    "append_record",
    "batch_info",
    "build_control_batch",
    "build_control_record_batch",
    "build_empty_v2_batch",
    "build_legacy",
    "build_v2_batch",
    "bulk_template",
    "compress",
    "encode_entry",
    "encode_message",
    "encode_record",
    "end_txn_marker_value",
    "gzip_compress",
    "iter_batch_bytes",
    "iter_batch_infos",
    "java_hashmap_order",
    "lz4_compress",
    "lz4_frame_header",
    "segment_file_name",
    "set_last_offset",
    "set_legacy_max_timestamp",
    "set_max_timestamp",
    "set_partition_leader_epoch",
    "snappy_compress",
    "snapshot_bytes",
    "varint",
    "write_bulk_segment",
    "write_partition",
    "write_segment",
    "write_snapshot",
    "xxh32",
    "zstd_compress",
]
