"""Records as Arrow: the one schema of ``kseg export``, Parquet files and the Spark data source.

One row per record.  Column names follow the JSON output's (camelCase,
Kafka's names); the record's own fields first, then its batch's:

==========================  ================================================
column                      meaning
==========================  ================================================
``logDir``                  the log directory (a broker's ``log.dirs`` entry)
``topic``, ``partition``    parsed from the directory name (``orders-3``);
                            partition null when the name has no ``-N``
``segment``                 the segment's base offset, 20 digits
``offset``                  the record's
``timestamp``               the record's timestamp as a timestamp (milliseconds, UTC; microseconds in
                            Spark); null when the record has none (-1) or it lies outside years
                            1-9999 (what Spark's and Parquet readers' timestamps hold)
``timestampMs``             the record's timestamp as Kafka stores it: epoch milliseconds (-1: none)
``timestampType``           ``CreateTime``, ``LogAppendTime``, ``NoTimestampType``
``key``, ``value``          binary, null when null (a tombstone's value)
``headers``                 list of ``{key: string, value: binary}``
``sequence``                the record's producer sequence (-1: none)
``batchPosition``           byte position of its batch in the ``.log``
``baseOffset``, ``lastOffset``, ``magic``, ``compression``, ``producerId``,
``producerEpoch``, ``baseSequence``, ``partitionLeaderEpoch``,
``isTransactional``, ``isControl``   the batch header's fields
``aborted``                 whether a ``read_committed`` consumer drops the
                            record as part of an aborted transaction
                            (``.txnindex`` entries, Kafka's consumer rule:
                            :mod:`kseg.storage.aborted`); false for control
                            records, which that consumer never delivers either
``crcValid``                whether the batch's CRC matched
``corruption``              null for a record; for a corrupt batch (Spark's
                            PERMISSIVE rows: every record column null)
                            ``<kind>: <message>``
``keyText``, ``valueText``  only with a key/value decoder: the decoded text
``headersText``             only with a key/value decoder: ``{key, value}`` with
                            the value decoded by the value decoder (null for a
                            null value, or one the decoder cannot represent:
                            its bytes are in ``headers``)
``unreadable``              only with the data source's ``onUnreadable=rows``:
                            null for a record or a corrupt batch; for a
                            segment (unit) that could not be read (no
                            credentials, access denied, network) one row with
                            every record column and ``corruption`` null and
                            the reason here
==========================  ================================================

Header keys are decoded as Kafka does (``new String(bytes, UTF_8)``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kseg.errors import KsegError
from kseg.format.compression import codec_name
from kseg.format.strings import string_decoder
from kseg.limits import INT64_MIN, TIMESTAMP_RANGE
from kseg.ops.export.columns import Columns
from kseg.ops.export.export import Corruption, RecordFacts, Split, topic_partition
from kseg.render.values import control_description, control_type, header_objects

if TYPE_CHECKING:
    from kseg.storage.context import Store
    from kseg.storage.outputs import Destination

ROWS_PER_BATCH = 4096

#: One row, in ``COLUMNS``' order: str, int, bool, bytes, the headers' list of dicts, or None.
Row = tuple[Any, ...]

# (name, Arrow type name, Spark SQL type) -- the schema, once.
COLUMNS = (
    ("logDir", "string", "STRING"),
    ("topic", "string", "STRING"),
    ("partition", "int32", "INT"),
    ("segment", "string", "STRING"),
    ("offset", "int64", "BIGINT"),
    ("timestamp", "timestamp", "TIMESTAMP"),
    ("timestampMs", "int64", "BIGINT"),
    ("timestampType", "string", "STRING"),
    ("key", "binary", "BINARY"),
    ("value", "binary", "BINARY"),
    ("headers", "headers", "ARRAY<STRUCT<key: STRING, value: BINARY>>"),
    ("sequence", "int32", "INT"),
    ("batchPosition", "int64", "BIGINT"),
    ("baseOffset", "int64", "BIGINT"),
    ("lastOffset", "int64", "BIGINT"),
    ("magic", "int32", "INT"),
    ("compression", "string", "STRING"),
    ("producerId", "int64", "BIGINT"),
    ("producerEpoch", "int32", "INT"),
    ("baseSequence", "int32", "INT"),
    ("partitionLeaderEpoch", "int32", "INT"),
    ("isTransactional", "bool", "BOOLEAN"),
    ("isControl", "bool", "BOOLEAN"),
    ("aborted", "bool", "BOOLEAN"),
    ("crcValid", "bool", "BOOLEAN"),
    ("corruption", "string", "STRING"),
)
TEXT_COLUMNS = (
    ("keyText", "string", "STRING"),
    ("valueText", "string", "STRING"),
    ("headersText", "headers_text", "ARRAY<STRUCT<key: STRING, value: STRING>>"),
)


UNREADABLE_COLUMN = ("unreadable", "string", "STRING")

#: The version of the rows' schema, in every file's metadata (:data:`VERSION_KEY`): 2 since ``timestamp``
#: became a timestamp and ``timestampMs`` the milliseconds (files without the key: 1, ``timestamp`` a bigint).
SCHEMA_VERSION = 2
VERSION_KEY = b"kseg.export.schemaVersion"


def columns(decoded: bool, unreadable: bool = False) -> tuple:
    return (COLUMNS + TEXT_COLUMNS if decoded else COLUMNS) + ((UNREADABLE_COLUMN,) if unreadable else ())


def spark_ddl(decoded: bool = False, unreadable: bool = False) -> str:
    """The schema as a Spark DDL string."""
    return ", ".join(f"`{name}` {sql}" for name, _, sql in columns(decoded, unreadable))


def arrow_schema(decoded: bool = False, unreadable: bool = False, spark: bool = False):
    """The rows' Arrow schema; ``spark``: ``timestamp`` in microseconds, the unit Spark takes from a data
    source (Parquet files keep Kafka's milliseconds)."""
    import pyarrow as pa

    types = {
        "timestamp": pa.timestamp("us" if spark else "ms", tz="UTC"),
        "string": pa.string(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "binary": pa.binary(),
        "bool": pa.bool_(),
        "headers": pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
        "headers_text": pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())])),
    }
    fields = [(name, types[kind]) for name, kind, _ in columns(decoded, unreadable)]
    return pa.schema(fields, metadata={VERSION_KEY: str(SCHEMA_VERSION).encode()})


def with_typed(schema, typed: tuple = (), spark: bool = False):
    """``schema`` with the typed columns of ``typed`` (the registry decoder's
    :class:`~kseg.decoders.registry.typed.TypedColumn` s: ``<role>Decoded``, ``<role>SchemaId``,
    ``<role>DecodeError``) after the text columns, before ``unreadable``."""
    if not typed:
        return schema
    import pyarrow as pa

    fields = list(schema)
    at = len(fields) - (fields[-1].name == UNREADABLE_COLUMN[0])
    extra = [f for t in typed for f in t.fields(spark)]
    return pa.schema(fields[:at] + extra + fields[at:], metadata=schema.metadata)


def add_typed(batch, typed: tuple, spark: bool = False):
    """``batch`` with the typed columns of ``typed`` (:func:`with_typed`), decoded from its ``key`` or
    ``value`` and ``headers`` columns (a control record's and a corruption row's are null)."""
    import pyarrow as pa

    control = batch.column("isControl").to_pylist()
    headers = batch.column("headers").to_pylist()
    names = batch.schema.names
    at = len(names) - (names[-1] == UNREADABLE_COLUMN[0])
    arrays = [batch.column(i) for i in range(batch.num_columns)]
    topics = batch.column("topic").to_pylist()
    extra = []
    for t in typed:
        payloads = [None if c else v for c, v in zip(control, batch.column(t.role).to_pylist(), strict=True)]
        extra += t.arrays(payloads, headers, spark, topics)
    schema = with_typed(batch.schema, typed, spark)
    return pa.RecordBatch.from_arrays(arrays[:at] + extra + arrays[at:], schema=schema)


@lru_cache(maxsize=8)
def _schema(decoded: bool, unreadable: bool = False, spark: bool = False):
    """:func:`arrow_schema`, made once per process and shape (a RowBuilder is made per split)."""
    return arrow_schema(decoded, unreadable, spark)


def typed_timestamp(ms: int) -> int | None:
    """The ``timestamp`` column's value (epoch ms) of a record whose ``timestampMs`` is ``ms``: None for
    Kafka's "no timestamp" (-1) and for what a Spark or Parquet timestamp cannot hold."""
    if ms == -1 or not TIMESTAMP_RANGE[0] <= ms <= TIMESTAMP_RANGE[1]:
        return None
    return ms


class RowBuilder:
    """Turns the :class:`RecordFacts` of one split into Arrow record batches."""

    def __init__(
        self,
        split: Split,
        key_decoder: Callable | None = None,
        value_decoder: Callable | None = None,
        unreadable: bool = False,
        spark: bool = False,
        typed: tuple = (),
    ) -> None:
        self.decoded = key_decoder is not None or value_decoder is not None
        self.typed, self.spark = typed, spark  # the registry decoder's typed columns (:func:`add_typed`)
        # header values: the value decoder's, or what it names for them (the registry's: Kafka's string decoder)
        self.header_decoder = getattr(value_decoder, "header_decoder", value_decoder)
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        self.unreadable = unreadable  # the ``unreadable`` column is last: null on every other row
        topic, partition = topic_partition(split.partition)
        self._const = (split.log_dir, topic, partition, split.segment)
        self.schema = _schema(self.decoded, unreadable, spark)
        self._timestamp = self.schema.get_field_index("timestamp")
        self._repeated: dict = {}  # the engine's batches' columns of one value (render.export_columns)

    def row(self, r: RecordFacts | Corruption) -> Row:
        row = self._row(r)
        return row + (None,) if self.unreadable else row

    def unreadable_row(self, reason: str) -> Row:
        """The row of a segment (unit) not read: its place, every other column null, ``reason`` last."""
        return (*self._const, *([None] * (len(self.schema) - len(self._const) - 1)), reason)

    def _row(self, r: RecordFacts | Corruption) -> Row:
        if isinstance(r, Corruption):
            row: Row = (
                *self._const,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                r.position,
                *([None] * 12),
                f"{r.kind}: {r.message}",
            )
            return row + (None, None, None) if self.decoded else row
        # RecordFacts' fields at once (a name looked up for each of twenty costs a fifth of an export's rows)
        (
            ts,
            ttype,
            key,
            value,
            raw,
            seq,
            position,
            base,
            last,
            magic,
            codec,
            pid,
            epoch,
            bseq,
            leader,
            txn,
            ctl,
            crc,
            ab,
        ) = r[1:]
        headers = [{"key": string_decoder(k), "value": v} for k, v in raw] if raw else []
        row = (
            *self._const,
            r[0],  # offset
            typed_timestamp(ts),
            ts,
            ttype,
            key,
            value,
            headers,
            seq,
            position,
            base,
            last,
            magic,
            codec_name(codec),
            pid,
            epoch,
            bseq,
            leader,
            txn,
            ctl,
            ab,
            crc,
            None,
        )
        if self.decoded and r.is_control:  # a marker's bytes are no payload (issue 33): its type, as dump says
            row += (control_type(r.key), _control_text(r.key, r.value), [])
        elif self.decoded:
            row += (
                _text(self.key_decoder, r.key, r.headers),
                _text(self.value_decoder, r.value, r.headers),
                [
                    {"key": h["key"], "value": None if h.get("base64") else h["value"]}
                    for h in header_objects(r.headers, self.header_decoder)
                ],
            )
        return row

    def columns(self, cols: Columns):
        """The engine's rows (:class:`~kseg.ops.export.columns.Columns`, read without decoders) as one
        Arrow record batch: what :meth:`to_arrow` makes of the rows :meth:`row` makes of them."""
        from kseg.render.export_columns import record_batch

        assert not self.decoded and not self.typed
        return record_batch(cols, self._const, self.schema, self.unreadable, self._repeated)

    def batches(self, facts: Iterable[RecordFacts | Corruption | Columns], rows_per_batch: int = ROWS_PER_BATCH):
        """Arrow record batches of at most ``rows_per_batch`` rows (the engine's columns as they come)."""
        pending: list[Row] = []
        for r in facts:
            if isinstance(r, Columns):
                if pending:
                    yield self.to_arrow(pending)
                    pending = []
                yield self.columns(r)
                continue
            pending.append(self.row(r))
            if len(pending) >= rows_per_batch:
                yield self.to_arrow(pending)
                pending = []
        if pending:
            yield self.to_arrow(pending)

    def to_arrow(self, rows: list[Row]):
        import pyarrow as pa

        ts, ms = self._timestamp, pa.timestamp("ms", tz="UTC")  # epoch ms in the rows, whatever the column's unit
        arrays = [
            _cast(pa.array(c, type=ms), f.type) if i == ts else pa.array(c, type=f.type)
            for i, (c, f) in enumerate(zip(zip(*rows, strict=True), self.schema, strict=True))
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return add_typed(batch, self.typed, self.spark) if self.typed else batch


def _cast(array, kind):
    """``array`` as ``kind`` (pyarrow's compute functions, and their import, only when it is not)."""
    return array if array.type == kind else array.cast(kind)


def _control_text(key: bytes | None, value: bytes | None) -> str | None:
    """``dump``'s text of a control record (``endTxnMarker: COMMIT coordinatorEpoch: 8``), None if it
    does not parse."""
    try:
        return control_description(key, value)
    except KsegError:
        return None


def _text(decoder: Callable | None, data: bytes | None, headers=()) -> str | None:
    if decoder is None or data is None:
        return None
    with_headers = getattr(decoder, "with_headers", None)  # the registry's: the schema id may be in a header
    return decoder(data) if with_headers is None else with_headers(data, headers)


# -- writing Parquet ----------------------------------------------------------------------------------


class CorruptionStop(Exception):
    """``--on-corruption fail`` met a corrupt batch; the export is abandoned (nothing is written)."""

    def __init__(self, corruption: Corruption) -> None:
        super().__init__(corruption.message)
        self.corruption = corruption


class ExportSummary:
    """What an export wrote and what it could not: counts, then the corrupt batches met."""

    __slots__ = ("records", "splits", "corrupt", "next_offsets", "replicas", "reasons")

    def __init__(self) -> None:
        self.records = 0
        #: the registry decoder's counts from Spark tasks: ((key or payload, reason), n) not decoded, then
        #: (with --validate) not matching their schema (``kseg.decoders.registry.Registry.merge``)
        self.reasons: tuple[list, list] = ([], [])
        self.splits = 0
        self.corrupt: list[Corruption] = []
        #: partition (``partition_key``) -> the offset after the last batch exported (an export report's)
        self.next_offsets: dict[str, int] = {}
        #: with one replica per topic-partition: which copy was exported and why, a line each
        self.replicas: list[str] = []

    def reached(self, others: dict[str, int]) -> None:
        """Take ``others``' next offsets where they are further."""
        mine = self.next_offsets
        for key, offset in others.items():
            if offset > mine.get(key, offset - 1):
                mine[key] = offset

    def line(self, output: str) -> str:
        """What was written, every row counted: records, then the corruption rows beside them."""
        rows = self.records + len(self.corrupt)
        text = f"{_n(self.records, 'record')} from {_n(self.splits, 'split')} written to {output}"
        if self.corrupt:
            text = (
                f"{_n(rows, 'row')} from {_n(self.splits, 'split')} written to {output}: {_n(self.records, 'record')}, "
                f"{_n(len(self.corrupt), 'corruption row')} (a corrupt batch each: see the lines above)"
            )
            stopped = len({c.log for c in self.corrupt if c.kind in ("corrupt-batch", "trailing-bytes")})
            if stopped:  # a broken length ends a split: what follows it was never read
                text += f"; {_n(stopped, 'segment')} not read past one"
        return text + "."


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def split_facts(
    split: Split,
    ranges,
    limit: int,
    on_corruption: str,
    summary: ExportSummary | None = None,
    on_corrupt: Callable[[Corruption], None] | None = None,
    committed: bool = False,
    columns: bool = False,
):
    """The record facts of ``split`` and its corruptions (counted in ``summary``, handed to
    ``on_corrupt``); with ``fail`` the first corruption raises :class:`CorruptionStop`; ``committed``:
    what a ``read_committed`` consumer reads (no aborted or control record); ``columns``: the plain
    batches' records as the engine's :class:`~kseg.ops.export.columns.Columns` where it runs (for rows
    without decoders)."""
    from kseg.ops.export.export import partition_key, read_split

    key, to, nxt = partition_key(split.log_dir, split.partition, split.store), ranges.to_offset, INT64_MIN
    read = read_split(split, ranges, limit, keep_invalid=on_corruption == "keep", committed=committed, columns=columns)
    for item in read:
        if isinstance(item, Columns):
            if summary is not None:
                summary.records += item.rows
                nxt = max(nxt, min(item.last_offset, to) + 1)
            yield item
            continue
        if isinstance(item, Corruption):
            if on_corruption == "fail":
                raise CorruptionStop(item)
            if summary is not None:
                summary.corrupt.append(item)
            if on_corrupt is not None:
                on_corrupt(item)
            yield item  # one marked row in place of the batch's records
            continue
        if summary is not None:
            summary.records += 1
            nxt = max(nxt, min(item.last_offset, to) + 1)
        yield item
    if summary is not None and nxt != INT64_MIN:
        summary.reached({key: nxt})


#: A Parquet row group is written when this many rows, or :data:`ROW_GROUP_BYTES` of Arrow data, are pending:
#: row groups span splits (10,000 one-record partitions make one row group, not 10,000, whose footer
#: metadata the writer would hold until the end), and a group's memory is bounded whatever its records.
ROW_GROUP_ROWS = 1 << 14
ROW_GROUP_BYTES = 4 << 20
#: The least row group (Arrow bytes) :func:`write_parquet_files` makes for a small ``--target-file-size``.
MIN_ROW_GROUP_BYTES = 64 << 10
#: Columns dictionary-encoded in Parquet: those that repeat within a split.  A dictionary on the others
#: (offsets, timestamps, keys, values: mostly unique) only grows until the writer falls back to plain
#: encoding, and costs ~30 MiB a row group while it does.
DICTIONARY = ("logDir", "topic", "segment", "timestampType", "compression")


class RowGroups:
    """Arrow record batches gathered into row groups of at most :data:`ROW_GROUP_ROWS` rows and about
    :data:`ROW_GROUP_BYTES` bytes, each written to ``writer`` (a ``pyarrow.parquet.ParquetWriter``) as one."""

    def __init__(self, writer, rows: int | None = None, nbytes: int | None = None) -> None:
        self.writer = writer
        self.max_rows = ROW_GROUP_ROWS if rows is None else rows
        self.max_bytes = ROW_GROUP_BYTES if nbytes is None else nbytes
        self.pending: list = []
        self.rows = self.bytes = 0
        self.groups = 0

    def add(self, batch) -> None:
        self.pending.append(batch)
        self.rows += batch.num_rows
        self.bytes += batch.nbytes
        if self.rows >= self.max_rows or self.bytes >= self.max_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        import pyarrow as pa

        table = pa.Table.from_batches(self.pending)
        self.pending = []
        self.writer.write_table(table, row_group_size=max(self.rows, 1))
        self.rows = self.bytes = 0
        self.groups += 1


def write_parquet(
    splits: Iterable[Split],
    output: Destination,
    *,
    ranges,
    limit: int,
    on_corruption: str = "skip",
    key_decoder: Callable | None = None,
    value_decoder: Callable | None = None,
    replace: bool = False,
    on_corrupt: Callable[[Corruption], None] | None = None,
    on_split: Callable[[Split], None] | None = None,
    committed: bool = False,
    typed: tuple = (),
) -> ExportSummary:
    """Write the records of ``splits`` as one Parquet file (local: atomically; a URI: one object).

    Memory is that of one row group (:class:`RowGroups`), whatever the number of records or splits.
    """
    from kseg.storage import files

    summary = ExportSummary()
    decoded = key_decoder is not None or value_decoder is not None
    batches = record_batches(
        splits, ranges, limit, on_corruption, (key_decoder, value_decoder), summary, on_corrupt, on_split, committed,
        typed,
    )  # fmt: skip
    schema = with_typed(arrow_schema(decoded), typed)
    files.write_stream(
        output.path, lambda sink: _write_groups(sink, batches, schema, None), replace=replace, store=output.store
    )
    return summary


def write_parquet_files(
    splits: Iterable[Split],
    name: Callable[[int], str],
    target_bytes: int,
    *,
    ranges,
    limit: int,
    on_corruption: str = "skip",
    key_decoder: Callable | None = None,
    value_decoder: Callable | None = None,
    committed: bool = False,
    drop: tuple[str, ...] = (),
    summary: ExportSummary | None = None,
    typed: tuple = (),
    store: Store,
) -> tuple[ExportSummary, list[str]]:
    """The records of ``splits`` as Parquet files of about ``target_bytes`` each, ``name(0)``, ``name(1)``,
    ...: small splits share a file, a large one spans several.  A file takes rows while its bytes
    written plus its pending rows' Arrow bytes stay within the target (a batch that would pass it is cut,
    its rest starting the next file); Parquet's encoding and zstd make rows no larger than their Arrow
    bytes, so the file's row groups end within the target, and -- the pending rows being at most an
    eighth of it (:func:`group_bytes`) -- at least about seven eighths of it but for a task's last file.
    Its footer (row-group metadata, a few KiB a row group) comes on top; a row larger than the target
    is a file of its own; the files are written to ``store`` (the output's).  Returns the summary and the
    files written."""
    from functools import partial

    from kseg.storage import files

    summary = ExportSummary() if summary is None else summary
    decoded = key_decoder is not None or value_decoder is not None
    decoders = (key_decoder, value_decoder)
    made = record_batches(splits, ranges, limit, on_corruption, decoders, summary, committed=committed, typed=typed)
    schema = with_typed(arrow_schema(decoded), typed)
    if drop:  # a hive layout's columns are in the directory names, not the files
        keep = [i for i, name in enumerate(schema.names) if name not in drop]
        schema = _select(schema, keep)
        made = (_columns(batch, keep, schema) for batch in made)
    batches = _Pushback(made)
    written: list[str] = []
    while batches.more():
        path = name(len(written))
        files.write_stream(
            path,
            partial(_write_groups, batches=batches, schema=schema, target_bytes=target_bytes),
            replace=True,
            store=store,
        )
        written.append(path)
    return summary, written


class _Pushback:
    """An iterator of Arrow batches that takes a batch's rest back (:func:`write_parquet_files`)."""

    def __init__(self, batches) -> None:
        self.batches = batches
        self.back: list = []

    def __iter__(self) -> _Pushback:
        return self

    def __next__(self):
        return self.back.pop() if self.back else next(self.batches)

    def push(self, batch) -> None:
        self.back.append(batch)

    def more(self) -> bool:
        batch = next(self, None)
        if batch is None:
            return False
        self.push(batch)
        return True


def record_batches(
    splits: Iterable[Split],
    ranges,
    limit: int,
    on_corruption: str,
    decoders: tuple[Callable | None, Callable | None],
    summary: ExportSummary,
    on_corrupt: Callable[[Corruption], None] | None = None,
    on_split: Callable[[Split], None] | None = None,
    committed: bool = False,
    typed: tuple = (),
):
    """Arrow batches of :data:`ROWS_PER_BATCH` rows of any number of splits (each row carries its
    split's columns, and the typed columns of ``typed``: :func:`add_typed`), counted in ``summary``."""
    from kseg.storage.aborted import last_stable_offset

    last_stable_offset.cache_clear()  # found again for this export: the files may have changed since the last
    pending: list[Row] = []
    builder = None
    columns = decoders == (None, None) and not typed  # the engine's columns: rows without decoded text
    for split in splits:
        builder = RowBuilder(split, *decoders, typed=typed)
        row = builder.row
        for r in split_facts(split, ranges, limit, on_corruption, summary, on_corrupt, committed, columns):
            if isinstance(r, Columns):
                if pending:
                    yield builder.to_arrow(pending)
                    pending = []
                yield builder.columns(r)
                continue
            pending.append(row(r))
            if len(pending) >= ROWS_PER_BATCH:
                yield builder.to_arrow(pending)
                pending = []
        summary.splits += 1
        if on_split is not None:
            on_split(split)
    if pending and builder is not None:
        yield builder.to_arrow(pending)


def group_bytes(target_bytes: int) -> int:
    """The Arrow bytes of a row group in a file of ``target_bytes``: an eighth of it, within
    [:data:`MIN_ROW_GROUP_BYTES`, :data:`ROW_GROUP_BYTES`] (fewer, larger groups: a smaller footer)."""
    return min(ROW_GROUP_BYTES, max(MIN_ROW_GROUP_BYTES, target_bytes // 8))


def _select(schema, keep: list[int]):
    import pyarrow as pa

    return pa.schema([schema.field(i) for i in keep], metadata=schema.metadata)


def _columns(batch, keep: list[int], schema):
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([batch.column(i) for i in keep], schema=schema)


def _write_groups(sink, batches, schema, target_bytes: int | None) -> None:
    """``batches`` into one Parquet file of ``schema`` on ``sink``, in row groups; with ``target_bytes``
    (``batches`` a :class:`_Pushback`), only the rows that keep the file within it (:func:`_fill`)."""
    import pyarrow.parquet as pq

    dictionary = [name for name in DICTIONARY if name in schema.names]
    with pq.ParquetWriter(sink, schema, compression="zstd", use_dictionary=dictionary) as writer:
        if target_bytes is None:
            groups = RowGroups(writer)
            for batch in batches:
                groups.add(batch)
        else:
            groups = RowGroups(writer, nbytes=group_bytes(target_bytes))
            _fill(sink, groups, batches, target_bytes)
        groups.flush()


def _fill(sink, groups: RowGroups, batches: _Pushback, target_bytes: int) -> None:
    """Rows from ``batches`` into ``groups``, in pieces of a quarter of a row group, while the file's bytes
    written plus its pending Arrow bytes fit ``target_bytes``; the piece that would not fit is cut and the
    rest of its batch pushed back.  The file's first row goes in whatever its size."""
    piece = max(1, groups.max_bytes // 4)
    taken = 0
    for batch in batches:
        rows = max(1, batch.num_rows * piece // max(batch.nbytes, 1))  # rows of about ``piece`` bytes
        for start in range(0, batch.num_rows, rows):
            part = batch.slice(start, rows)
            room = target_bytes - sink.tell() - groups.bytes
            if part.nbytes > room:
                keep = max(min(part.num_rows, max(0, room) * part.num_rows // max(part.nbytes, 1)), 0 if taken else 1)
                if start + keep < batch.num_rows:
                    batches.push(batch.slice(start + keep))
                if keep:
                    groups.add(part.slice(0, keep))
                return
            groups.add(part)
            taken += part.num_rows
