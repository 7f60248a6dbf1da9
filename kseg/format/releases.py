"""Kafka release lines and how their ``kafka-dump-log.sh`` prints the same bytes differently.

``kseg dump --kafka-version X.Y`` (or ``KSEG_KAFKA_VERSION``) prints the text of
release X.Y's own tool.  Each :class:`Release` is a set of facts read from that
release's ``DumpLogSegments`` (``core/.../kafka/tools/DumpLogSegments.scala`` up
to 4.2; ``tools/.../org/apache/kafka/tools/DumpLogSegments.java`` from 4.3,
KAFKA-14579) and the serdes it calls, on the branches of the Kafka repository
(commits in ``docs/dump.md``).  4.1 and 4.2 run the same tool code; they differ
only in the tagged fields their message classes know (``taggedSince`` in
``kseg/decoders/schemas/index.json``): a tagged field newer than the release is
read and not printed, as the release's generated converter keeps an unknown tag
aside.

The differences, by release:

* 4.0: ``__consumer_offsets`` record types 9-16 (share groups, KIP-932, and
  ``ConsumerGroupRegularExpression``); a value version outside the message's
  valid range is ``UnknownRecordVersionException`` ("Found an unknown record
  version V for T type"); the share-group-state decoder; remote-log metadata
  ends ``, txnIdxEmpty=<bool>``.
* 4.1 (the same tool in 4.2): record types from the generated
  ``CoordinatorRecordType`` -- the StreamsGroup records 17, 19-23 (KIP-1071),
  type 9 gone; ``--transaction-log-decoder`` prints the records' JSON; the
  share-state value envelope is labelled ``version``; a LEADER_CHANGE control
  record prints `` LeaderChange: {json}``; a record without a key fails with
  "... using the specified decoder ...".
* 4.3 (the tool in Java): no stray ``}`` after a legacy record's ``crc``; no
  trailing space on a producer-snapshot line; with ``--skip-record-metadata``
  and no key a line starts ``| payload:``; "Mismatches in" entries sorted by
  index offset, descending, one per offset; "Non-consecutive offsets" sorted
  ascending, one per first offset, and the previous offset starts at -1, so a
  segment whose first offset is not 0 reports ``-1 is followed by N``: a plain
  bug of 4.3 and 4.4, reproduced only under those versions; the not-found
  header names the file (``... not found in :<path>``).
* KRaft records: 3.9 knows types up to 27; 4.0-4.3 add 28 (``ClearElrRecord``); 4.4
  adds 29 (``UnregisterControllerRecord``); a newer type is "Unknown metadata id N".
* 4.4: ``transactionStatus`` printed as the state's name (KAFKA-20712); the
  ``.txnindex`` dump prints ``AbortedTxn.HIGHEST_SUPPORTED_VERSION`` (0) as every
  entry's version.

Release lines before 3.9 print records, batches and decoders in other layouts
(2.8's record line, 3.0-3.2's "Starting offset", 3.3-3.8's offsets decoder);
kseg does not reproduce them and says so.
"""

from __future__ import annotations

import os

#: ``GroupCoordinatorRecordSerde``'s record types, per release line.
_GROUP_TYPES_39 = frozenset(range(9))
_GROUP_TYPES_40 = frozenset(range(17))
_GROUP_TYPES_41 = frozenset((*range(9), *range(10, 18), *range(19, 24)))

ENV = "KSEG_KAFKA_VERSION"


class Release:
    """What one release line's ``DumpLogSegments`` prints differently (see the module docstring)."""

    __slots__ = (
        "deprecated_serializer_notice",
        "generic_missing_key",
        "group_types",
        "java_tool",
        "leader_change_json",
        "lines",
        "metadata_max_api_key",
        "name",
        "remote_txn_idx_empty",
        "share_decoder",
        "share_value_label",
        "txn_index_highest_version",
        "txn_log_json",
        "txn_status_name",
        "value_version_check",
    )

    def __init__(self, name: str, lines: tuple[str, ...], *, group_types: frozenset, share_decoder: bool,
                 value_version_check: bool, generic_missing_key: bool, txn_log_json: bool, txn_status_name: bool,
                 share_value_label: str, leader_change_json: bool, remote_txn_idx_empty: bool, java_tool: bool,
                 txn_index_highest_version: bool, metadata_max_api_key: int) -> None:
        self.name = name
        self.lines = lines
        self.group_types = group_types
        self.share_decoder = share_decoder
        self.value_version_check = value_version_check
        self.generic_missing_key = generic_missing_key
        self.txn_log_json = txn_log_json
        self.txn_status_name = txn_status_name
        self.share_value_label = share_value_label
        self.leader_change_json = leader_change_json
        self.remote_txn_idx_empty = remote_txn_idx_empty
        self.java_tool = java_tool
        self.txn_index_highest_version = txn_index_highest_version
        self.metadata_max_api_key = metadata_max_api_key
        #: 3.9 only: "kafka.serializer.X is deprecated. Please use org.apache.kafka.tools.api.X instead"
        #: (printed per .log when the decoders are made); 4.0 removed the old classes
        self.deprecated_serializer_notice = name == "3.9"

    def __repr__(self) -> str:
        return f"Release({self.name})"

    def knows(self, line: str) -> bool:
        """Whether this release is ``line`` ("4.1", or "current": the schemas' own) or newer."""
        if line == "current":
            return self is LATEST
        return _key(self.name) >= _key(line)


def _key(line: str) -> tuple[int, int]:
    major, minor = line.split(".")[:2]
    return int(major), int(minor)


_COMMON = {"share_value_label": "version"}
K39 = Release("3.9", ("3.9",), group_types=_GROUP_TYPES_39, share_decoder=False, value_version_check=False,
              generic_missing_key=False, txn_log_json=False, txn_status_name=False, share_value_label="type",
              leader_change_json=False, remote_txn_idx_empty=False, java_tool=False, txn_index_highest_version=False,
              metadata_max_api_key=27)
K40 = Release("4.0", ("4.0",), group_types=_GROUP_TYPES_40, share_decoder=True, value_version_check=True,
              generic_missing_key=False, txn_log_json=False, txn_status_name=False, share_value_label="type",
              leader_change_json=False, remote_txn_idx_empty=True, java_tool=False, txn_index_highest_version=False,
              metadata_max_api_key=28)
K41 = Release("4.1", ("4.1",), group_types=_GROUP_TYPES_41, share_decoder=True, value_version_check=True,
              generic_missing_key=True, txn_log_json=True, txn_status_name=False, leader_change_json=True,
              remote_txn_idx_empty=True, java_tool=False, txn_index_highest_version=False,
              metadata_max_api_key=28, **_COMMON)
K42 = Release("4.2", ("4.2",), group_types=_GROUP_TYPES_41, share_decoder=True, value_version_check=True,
              generic_missing_key=True, txn_log_json=True, txn_status_name=False, leader_change_json=True,
              remote_txn_idx_empty=True, java_tool=False, txn_index_highest_version=False,
              metadata_max_api_key=28, **_COMMON)
K43 = Release("4.3", ("4.3",), group_types=_GROUP_TYPES_41, share_decoder=True, value_version_check=True,
              generic_missing_key=True, txn_log_json=True, txn_status_name=False, leader_change_json=True,
              remote_txn_idx_empty=True, java_tool=True, txn_index_highest_version=False,
              metadata_max_api_key=28, **_COMMON)
K44 = Release("4.4", ("4.4",), group_types=_GROUP_TYPES_41, share_decoder=True, value_version_check=True,
              generic_missing_key=True, txn_log_json=True, txn_status_name=True, leader_change_json=True,
              remote_txn_idx_empty=True, java_tool=True, txn_index_highest_version=True,
              metadata_max_api_key=29, **_COMMON)

RELEASES: tuple[Release, ...] = (K39, K40, K41, K42, K43, K44)
LATEST = K44
#: Every release line kseg reproduces, oldest first ("3.9", "4.0", ... "4.4").
LINES: tuple[str, ...] = tuple(line for r in RELEASES for line in r.lines)
#: Release lines whose tool prints in layouts kseg does not reproduce.
UNSUPPORTED = ("2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8")
_BY_LINE = {line: r for r in RELEASES for line in r.lines}


def supported_range() -> str:
    """``"3.9-4.4"``: the release lines ``--kafka-version`` accepts."""
    return f"{LINES[0]}-{LINES[-1]}"


def release(text: str | None) -> Release:
    """The release of ``X.Y`` (or ``X.Y.Z``; ``None``/empty: the newest); ``ValueError`` with the reason."""
    if text is None or not text.strip():
        return LATEST
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]) or len(parts) > 3:
        raise ValueError(f"{text!r} is not a Kafka version (X.Y, e.g. {LATEST.lines[-1]})")
    line = f"{int(parts[0])}.{int(parts[1])}"
    found = _BY_LINE.get(line)
    if found is not None:
        return found
    if line in UNSUPPORTED:
        raise ValueError(f"Kafka {line}'s dump output is not reproduced (kseg reproduces {supported_range()})")
    raise ValueError(f"unknown Kafka release line {line} (kseg reproduces {supported_range()})")


def from_env(value: str | None = None) -> Release:
    """The release of ``value``, else of ``$KSEG_KAFKA_VERSION``, else the newest."""
    return release(value if value is not None else os.environ.get(ENV))
