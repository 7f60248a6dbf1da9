"""Exit codes, default bounds and sentinel values: each written once, for every layer.

Nothing here imports anything; ``kseg.format`` may use it as freely as ``kseg.cli``.

Exit codes (``docs/index.md``): ``kseg dump`` keeps the meaning of Kafka's
tool (0 every file read to its end, 1 a file could not be read past
corruption, 2 usage or I/O error); verification commands (``verify-index``,
``rebuild-index --check``) and lookups use 0 clean/found, 1 problems/not
found, 2 usage or I/O error.  Both schemes share the numbers, so one set of
names serves them all.
"""

from __future__ import annotations

#: Success: every file read (dump), nothing wrong (verify, rebuild), a record found (lookups).
EXIT_OK = 0
#: Problems found (verify, rebuild), a file unreadable past corruption (dump), no record (lookups).
EXIT_PROBLEMS = 1
#: Usage error, or a file that could not be opened or read: never a verdict.
EXIT_ERROR = 2

#: ``--max-message-size`` default: 5 MiB, larger than Kafka's ``message.max.bytes`` default
#: (1 MiB + overhead) and the default of ``kafka-dump-log.sh --max-message-size``.
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024

#: A batch may decompress to at most this many times ``--max-message-size`` bytes: a bound
#: against decompression bombs well above any real compression ratio of Kafka traffic.
DECOMPRESSION_FACTOR = 8

#: ``Integer.MAX_VALUE``: the default of ``kafka-dump-log.sh --max-bytes`` (read the whole file).
INT32_MAX = 0x7FFFFFFF

#: Java's ``Long.MIN_VALUE`` and ``Long.MAX_VALUE``: the range of every offset and timestamp.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

#: ``RecordBatch.NO_TIMESTAMP``: a magic 0 message, an empty time index, no timestamp at all.
NO_TIMESTAMP = -1

#: Years 1 to 9999 in epoch milliseconds: what a Spark ``TIMESTAMP`` (and most Parquet readers) hold.
TIMESTAMP_RANGE = (-62135596800000, 253402300799999)


def decompression_limit(max_message_size: int) -> int:
    """Most bytes one batch may decompress to (and read, if larger than the window)."""
    return max(max_message_size, 1) * DECOMPRESSION_FACTOR


#: The bound of one batch's decompressed bytes when no ``--max-message-size`` is given (40 MiB).
DEFAULT_DECOMPRESSION_LIMIT = decompression_limit(DEFAULT_MAX_MESSAGE_SIZE)
