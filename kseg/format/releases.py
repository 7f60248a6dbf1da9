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

* 3.7 (``DumpLogSegments.scala`` at 3.7 ``7fdfeb12``; 3.8's tool otherwise):
  ``--offsets-decoder`` prints ``GroupMetadataManager.formatRecordKeyAndValue``'s
  text (``kseg.decoders.offsets_legacy``; KAFKA-16470 replaced it in 3.8);
  control types 5 and 6 print ``controlType: UNKNOWN(N)`` (KAFKA-16207 added
  KRAFT_VERSION/KRAFT_VOTERS in 3.8); its decoder classes are
  ``kafka.serializer``'s only (KAFKA-16796, 3.8), without 3.8's deprecation
  lines; PartitionRecord/PartitionChangeRecord's tagged field prints as
  ``lastKnownELR`` (``lastKnownElr`` from 3.8).
* 3.8 (``DumpLogSegments.scala`` at 3.8 ``8333ccc1``): 3.9's tool without
  ``--remote-log-metadata-decoder`` (KAFKA-16228, 3.9).  Every other line it
  prints is 3.9's: the same Scala code paths, the same message schemas for the
  record types it decodes (group coordinator types 0-8, KRaft types up to 27,
  the transaction log), the same ``kafka.serializer`` deprecation lines.
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
  header names the file (``... not found in :<path>``); the record classes are
  ``org.apache.kafka.common.record.internal``'s (a JVM message naming ``Record``).
* KRaft records: 3.8 and 3.9 know types up to 27; 4.0-4.3 add 28 (``ClearElrRecord``); 4.4
  adds 29 (``UnregisterControllerRecord``); a newer type is "Unknown metadata id N".
* 4.4: ``transactionStatus`` printed as the state's name (KAFKA-20712); the
  ``.txnindex`` dump prints ``AbortedTxn.HIGHEST_SUPPORTED_VERSION`` (0) as every
  entry's version.

* 3.0-3.2 (``DumpLogSegments.scala`` at 3.0 ``dee764c8``, 3.1 ``2b57b38f``, 3.2 ``e4ca0666``): 3.7's
  decoders and record lines, but ``Starting offset: N``; a ``.checkpoint`` is an unknown file and control
  types 3/4 print by name (the snapshot dump came in 3.3); no ``--max-bytes``; ``currentTxnFirstOffset``
  as Scala's ``None``/``Some(N)`` (to 3.4); 3.0 and 3.1 no ``deleteHorizonMs``, 3.0 no ``lastTimestamp``.
* 2.8 (``3893458``): 3.0's, but the record line carries the batch's fields, ``compresscodec`` is the
  enum's name (``NONE``), control types 2/3 are QUORUM_REASSIGNMENT/LEADER_CHANGE, and its coordinator
  classes throw on an unknown offsets/transaction key and know fewer value versions.
* ``--cluster-metadata-decoder`` under 3.0-3.2 reads with their own tables (``kraft_table``): their
  metadata classes know version 0 of each record (types 0-12, 14-17; 3.2 also 18, 19), read every newer
  version with its field list, and version 0 itself later changed without a bump: the tables carry
  3.0-3.2's layouts of ``FeatureLevelRecord`` (``MinFeatureLevel``/``MaxFeatureLevel``),
  ``UserScramCredentialRecord``, ``AccessControlRecord`` (6), ``RemoveFeatureLevelRecord`` (16) and 3.0/3.1's
  ``ProducerIdsRecord`` (``ProducerIdsEnd``).  Refused under 2.8 (its ``raft`` module's serde; not carried).

* 3.3-3.6: 3.7's text (``git diff`` of the tool's strings, the coordinator text, the control types,
  the snapshot records: the same), but 3.3 and 3.4 print ``currentTxnFirstOffset`` as Scala's
  ``Option``; each apart for the KRaft decoder.  Their ``--cluster-metadata-decoder`` reads with
  their own tables (``kraft_table``: types, versions, fields; 3.6 added ``DelegationTokenRecord`` v0's
  ``Requester`` without a version bump); 3.3's and 3.4's tables also carry the layouts kseg's schemas
  lack: ``UserScramCredentialRecord`` v0 (``Name``, ``CredentialInfos`` of ``Mechanism``, ``Salt``,
  ``SaltedPassword``, ``Iterations``; re-laid in 3.5 without a bump, so a 3.5+ record is read, and
  fails or misreads, as 3.3/3.4's class would) and type 6 ``AccessControlRecord`` (gone in 3.5).
  Each of these releases reads its KRaft types (up to 20 in 3.3, 21, 22, 26 in 3.6) with its own
  classes, a newer record version with its old field
  list (as 3.9's classes read RegisterBrokerRecord v4, see ``tests/data/kafka4x/MANIFEST.md``), so
  3.6 reads PartitionRecord v1's ``Directories`` array where its tagged fields are.
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
        "cluster_metadata_decoder",
        "coordinator_28",
        "delete_horizon",
        "deprecated_serializer_notice",
        "generic_missing_key",
        "group_types",
        "java_tool",
        "record_class",
        "kraft_table",
        "kraft_control_records",
        "leader_change_json",
        "legacy_offsets_text",
        "lines",
        "log_start_label",
        "metadata_max_api_key",
        "metadata_renames",
        "max_bytes_option",
        "name",
        "producer_last_timestamp",
        "record_line_28",
        "remote_decoder",
        "scala_txn_first_offset",
        "remote_txn_idx_empty",
        "share_decoder",
        "share_value_label",
        "snapshot_files",
        "tools_api_decoders",
        "txn_index_highest_version",
        "txn_log_json",
        "txn_status_name",
        "value_version_check",
    )

    def __init__(
        self,
        name: str,
        lines: tuple[str, ...],
        *,
        group_types: frozenset[int],
        share_decoder: bool,
        value_version_check: bool,
        generic_missing_key: bool,
        txn_log_json: bool,
        txn_status_name: bool,
        share_value_label: str,
        leader_change_json: bool,
        remote_txn_idx_empty: bool,
        java_tool: bool,
        txn_index_highest_version: bool,
        metadata_max_api_key: int,
        remote_decoder: bool = True,
        before_38: bool = False,
    ) -> None:
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
        #: ``--remote-log-metadata-decoder``: 3.9+ (KAFKA-16228)
        self.remote_decoder = remote_decoder
        #: up to 3.7: ``--offsets-decoder`` is ``GroupMetadataManager.formatRecordKeyAndValue``'s text
        #: (``kseg.decoders.offsets_legacy``); control types 5/6 (3.8's KRAFT_VERSION, KRAFT_VOTERS) are
        #: ``UNKNOWN``; no ``org.apache.kafka.tools.api`` decoders (KAFKA-16796, 3.8); the JSON field
        #: ``lastKnownELR`` (renamed ``lastKnownElr`` in 3.8) of PartitionRecord/PartitionChangeRecord
        self.legacy_offsets_text = before_38
        self.kraft_control_records = not before_38
        self.tools_api_decoders = not before_38
        self.metadata_renames: dict[str, dict[str, str]] = (
            {
                "PartitionRecord": {"lastKnownElr": "lastKnownELR"},
                "PartitionChangeRecord": {"lastKnownElr": "lastKnownELR"},
            }
            if before_38
            else {}
        )
        #: 3.8 and 3.9: "kafka.serializer.X is deprecated. Please use org.apache.kafka.tools.api.X instead"
        #: (printed per .log when the decoders are made); 4.0 removed the old classes
        self.deprecated_serializer_notice = name in ("3.8", "3.9")
        #: 3.3 added the .checkpoint dump (KAFKA-13845), ``--max-bytes`` (KAFKA-13687), the SnapshotHeader/Footer
        #: lines and "Log starting offset:"; 3.0-3.2 print "Starting offset:", ignore a .checkpoint as an
        #: unknown file and print control types 3/4 as ``controlType: SNAPSHOT_HEADER(3)``
        tool_33 = _key(name) >= (3, 3)
        self.log_start_label = "Log starting offset: " if tool_33 else "Starting offset: "
        self.snapshot_files = tool_33
        self.max_bytes_option = tool_33
        #: the batch line's ``deleteHorizonMs`` (3.2+, apache/kafka#11694) and the producer-snapshot line's
        #: ``lastTimestamp`` (3.1+)
        self.delete_horizon = _key(name) >= (3, 2)
        self.producer_last_timestamp = _key(name) >= (3, 1)
        #: up to 3.4 ``ProducerStateEntry`` was Scala: ``currentTxnFirstOffset`` an ``Option[Long]``, printed
        #: ``None``/``Some(N)``; Java's ``OptionalLong`` (``OptionalLong.empty``/``OptionalLong[N]``) from 3.5
        self.scala_txn_first_offset = _key(name) < (3, 5)
        #: 2.8: the record line carries the batch's fields (``offset: N isValid: .. crc: .. keySize: ..``), the
        #: batch line's ``compresscodec`` is the enum's name (``NONE``), control types 2/3 are
        #: QUORUM_REASSIGNMENT/LEADER_CHANGE (3.0 renumbered them)
        self.record_line_28 = _key(name) < (3, 0)
        #: 2.8's coordinator classes: an unknown offsets or transaction key version throws
        #: ``IllegalStateException`` (3.0 prints ``unknown::version=N``); OffsetCommitValue/GroupMetadataValue
        #: know versions 0-3, TransactionLogValue 0 only; an unknown state is "Unknown transaction state byte"
        self.coordinator_28 = _key(name) < (3, 0)
        #: 2.8's metadata classes (see the module docstring): not reproduced
        #: 3.0-3.6: their own KRaft tables (``kseg/decoders/schemas/releases/kraft-<line>.json``: types,
        #: highest versions, fields and tagged fields of their metadata classes; 3.0-3.4's also the
        #: ``layout`` of the records kseg's schemas lay out otherwise, e.g. ``UserScramCredentialRecord`` v0)
        self.kraft_table = name if (3, 0) <= _key(name) <= (3, 6) else None
        self.cluster_metadata_decoder = _key(name) >= (3, 7) or self.kraft_table is not None
        #: the record interface the tool's parsers are handed, as a JVM message names it (the helpful
        #: ``NullPointerException`` of a null value): 4.3's and 4.4's ``DumpLogSegments.java`` import
        #: ``org.apache.kafka.common.record.internal.Record`` (the record classes moved there); up to 4.2
        #: ``clients/.../common/record/Record.java``
        self.record_class = (
            "org.apache.kafka.common.record.internal.Record" if java_tool else "org.apache.kafka.common.record.Record"
        )

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


# The table: every release line's facts written out in full, on purpose (``duplicates`` pairs the entries
# of neighbouring lines that agree).  One entry holds all a line differs in, so it reads, and is checked
# against that release's tool, in one place; no entry is derived from another.
K37 = Release(
    "3.7",
    ("3.7",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=27,
    remote_decoder=False,
    before_38=True,
)
K38 = Release(
    "3.8",
    ("3.8",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=27,
    remote_decoder=False,
)
K39 = Release(
    "3.9",
    ("3.9",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=27,
)
K40 = Release(
    "4.0",
    ("4.0",),
    group_types=_GROUP_TYPES_40,
    share_decoder=True,
    value_version_check=True,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=True,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=28,
)
K41 = Release(
    "4.1",
    ("4.1",),
    group_types=_GROUP_TYPES_41,
    share_decoder=True,
    value_version_check=True,
    generic_missing_key=True,
    txn_log_json=True,
    txn_status_name=False,
    leader_change_json=True,
    remote_txn_idx_empty=True,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=28,
    share_value_label="version",
)
K42 = Release(
    "4.2",
    ("4.2",),
    group_types=_GROUP_TYPES_41,
    share_decoder=True,
    value_version_check=True,
    generic_missing_key=True,
    txn_log_json=True,
    txn_status_name=False,
    leader_change_json=True,
    remote_txn_idx_empty=True,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=28,
    share_value_label="version",
)
K43 = Release(
    "4.3",
    ("4.3",),
    group_types=_GROUP_TYPES_41,
    share_decoder=True,
    value_version_check=True,
    generic_missing_key=True,
    txn_log_json=True,
    txn_status_name=False,
    leader_change_json=True,
    remote_txn_idx_empty=True,
    java_tool=True,
    txn_index_highest_version=False,
    metadata_max_api_key=28,
    share_value_label="version",
)
K44 = Release(
    "4.4",
    ("4.4",),
    group_types=_GROUP_TYPES_41,
    share_decoder=True,
    value_version_check=True,
    generic_missing_key=True,
    txn_log_json=True,
    txn_status_name=True,
    leader_change_json=True,
    remote_txn_idx_empty=True,
    java_tool=True,
    txn_index_highest_version=True,
    metadata_max_api_key=29,
    share_value_label="version",
)

# The older lines, in the same table form (see the comment above K37).
K28 = Release(
    "2.8",
    ("2.8",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=14,
    remote_decoder=False,
    before_38=True,
)
K30 = Release(
    "3.0",
    ("3.0",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=17,
    remote_decoder=False,
    before_38=True,
)
K31 = Release(
    "3.1",
    ("3.1",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=17,
    remote_decoder=False,
    before_38=True,
)
K32 = Release(
    "3.2",
    ("3.2",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=19,
    remote_decoder=False,
    before_38=True,
)
#: 3.3-3.6 print what 3.7 prints (the same tool strings, coordinator text and control types); 3.3/3.4 only
#: differ by Scala's ``Option`` on a producer-snapshot line; each reads KRaft records with its own table
K33 = Release(
    "3.3",
    ("3.3",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=20,
    remote_decoder=False,
    before_38=True,
)  # its KRaft table decides
K34 = Release(
    "3.4",
    ("3.4",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=21,
    remote_decoder=False,
    before_38=True,
)  # its KRaft table decides
K35 = Release(
    "3.5",
    ("3.5",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=22,
    remote_decoder=False,
    before_38=True,
)  # its KRaft table decides
K36 = Release(
    "3.6",
    ("3.6",),
    group_types=_GROUP_TYPES_39,
    share_decoder=False,
    value_version_check=False,
    generic_missing_key=False,
    txn_log_json=False,
    txn_status_name=False,
    share_value_label="type",
    leader_change_json=False,
    remote_txn_idx_empty=False,
    java_tool=False,
    txn_index_highest_version=False,
    metadata_max_api_key=26,
    remote_decoder=False,
    before_38=True,
)  # its KRaft table decides
RELEASES: tuple[Release, ...] = (K28, K30, K31, K32, K33, K34, K35, K36, K37, K38, K39, K40, K41, K42, K43, K44)
LATEST = K44
#: Every release line kseg reproduces, oldest first ("3.7", "3.8", ... "4.4").
LINES: tuple[str, ...] = tuple(line for r in RELEASES for line in r.lines)
_BY_LINE = {line: r for r in RELEASES for line in r.lines}


#: Every release line from 2.8 to the newest, in order (there was no 2.9).
_ALL_LINES = ("2.8", *(f"3.{m}" for m in range(10)), *(f"4.{m}" for m in range(5)))


def supported_range() -> str:
    """``"2.8-4.4"``: the release lines ``--kafka-version`` accepts, as runs of consecutive lines."""
    runs: list[list[str]] = []
    previous = False
    for line in _ALL_LINES:
        if line in _BY_LINE:
            if previous:
                runs[-1].append(line)
            else:
                runs.append([line])
        previous = line in _BY_LINE
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


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
    raise ValueError(f"unknown Kafka release line {line} (kseg reproduces {supported_range()})")


def from_env(value: str | None = None) -> Release:
    """The release of ``value``, else of ``$KSEG_KAFKA_VERSION``, else the newest."""
    return release(value if value is not None else os.environ.get(ENV))
