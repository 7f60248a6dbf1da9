"""Segments as a DataFrame: ``spark.read.format("kseg")`` (Spark's Python Data Source API).

::

    import kseg.spark
    kseg.spark.register(spark)
    df = spark.read.format("kseg").load("s3://backups/kafka/")
    df.where("topic = 'orders' AND offset BETWEEN 1000 AND 2000").show()

One row per record, the columns of :mod:`kseg.render.export` (``kseg
export`` writes the same rows).  A corrupt batch is one row with
``corruption`` set and the record columns null, as Spark's own readers do in
PERMISSIVE mode; ``onCorruption=fail`` fails the task instead.

Options (all strings, as Spark passes them):

``path``/``paths``        comma-separated local paths or URIs (``load(path)`` sets ``path``)
``fromOffset``, ``toOffset``  inclusive offset range
``fromTime``, ``toTime``      ``[from, to)`` in epoch ms or ISO-8601 with a zone
``keyDecoder``, ``valueDecoder``  adds ``keyText``/``valueText`` (string, hex, base64, json, module:function)
``onCorruption``          ``skip`` (default), ``fail`` or ``keep``
``splitBytes``            segments larger than this are read by several tasks (default 128 MiB)
``maxMessageSize``        as ``--max-message-size`` (default 5 MiB)

Planning (discovery, then splits cut at offset-index positions) runs on
the driver; each task reads one split with ranged reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

NAME = "kseg"


class SplitPartition(InputPartition):
    """One task's splits (byte ranges of segments of one partition), as a picklable input partition."""

    def __init__(self, splits) -> None:
        super().__init__([tuple(s) for s in splits])


class KsegDataSource(DataSource):
    """``format("kseg")``: records of Kafka log segments."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        from kseg.render.export import spark_ddl

        return spark_ddl(_decoded(self.options))

    def reader(self, schema) -> "KsegReader":
        return KsegReader(dict(self.options))


class KsegReader(DataSourceReader):
    def __init__(self, options: dict) -> None:
        self.options = options
        self.settings = read_options(options)

    def partitions(self):
        from kseg.ops.export.export import plan
        from kseg.storage.partition import discover

        s = self.settings
        notes: list[str] = []
        splits = plan(discover(s["paths"], notes), s["ranges"], s["split_bytes"], s["limit"])
        return [SplitPartition(group) for group in group_splits(splits, s["split_bytes"])]

    def read(self, partition):
        from kseg.ops.export.export import Split
        from kseg.render.export import RowBuilder, split_facts

        s = self.settings
        if partition is None or partition.value is None:  # no split at all: Spark still reads once
            return
        decoders = _decoder_functions(self.options)
        for value in partition.value:
            split = Split(*value)
            facts = split_facts(split, s["ranges"], s["limit"], s["on_corruption"])
            yield from RowBuilder(split, *decoders).batches(facts)


def group_splits(splits: list, target: int) -> list[list]:
    """Consecutive splits of one partition packed into tasks of at most ``target`` bytes: a
    partition of small segments is one task, a large segment's splits are tasks of their own."""
    groups: list[list] = []
    size = 0
    for split in splits:
        last = groups[-1][-1] if groups else None
        same = last is not None and (last.log_dir, last.partition) == (split.log_dir, split.partition)
        if same and size + split.bytes <= target:
            groups[-1].append(split)
            size += split.bytes
        else:
            groups.append([split])
            size = split.bytes
    return groups


def _option(options: Mapping[str, str], name: str) -> str | None:
    """Spark lower-cases option keys in some versions: look both ways."""
    for key in (name, name.lower()):
        if key in options and options[key] is not None:
            return options[key]
    return None


def _decoded(options: Mapping[str, str]) -> bool:
    return _option(options, "keyDecoder") is not None or _option(options, "valueDecoder") is not None


def _decoder_functions(options: dict) -> tuple:
    from kseg.decoders.simple import resolve

    names = (_option(options, "keyDecoder"), _option(options, "valueDecoder"))
    return tuple(None if n is None else resolve(n) for n in names)


def read_options(options: dict) -> dict:
    """The reader's settings from Spark's option strings (ValueError names a bad one)."""
    from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, decompression_limit
    from kseg.ops.export.export import DEFAULT_SPLIT_BYTES, INT64_MAX, INT64_MIN, ON_CORRUPTION, Ranges
    from kseg.timestamps import parse_timestamp

    raw = _option(options, "paths") or _option(options, "path")
    if not raw:
        raise ValueError("kseg data source: give a path: spark.read.format('kseg').load('s3://bucket/prefix')")
    from kseg.spark.paths import absolute

    paths = [absolute(p.strip()) for p in str(raw).split(",") if p.strip()]  # made on the driver (planning)

    def number(name: str, default: int) -> int:
        value = _option(options, name)
        try:
            return default if value is None else int(value)
        except ValueError:
            raise ValueError(f"kseg data source: option {name} must be an integer, got {value!r}") from None

    def time(name: str, default: int) -> int:
        value = _option(options, name)
        try:
            return default if value is None else parse_timestamp(str(value), names=False)
        except ValueError as exc:
            raise ValueError(f"kseg data source: option {name}: {exc}") from None

    ranges = Ranges(
        number("fromOffset", INT64_MIN),
        number("toOffset", INT64_MAX),
        time("fromTime", INT64_MIN),
        time("toTime", INT64_MAX),
    )
    on_corruption = (_option(options, "onCorruption") or "skip").lower()
    if on_corruption not in ON_CORRUPTION:
        raise ValueError(f"kseg data source: onCorruption must be skip, fail or keep, got {on_corruption!r}")
    return {
        "paths": paths,
        "ranges": ranges,
        "on_corruption": on_corruption,
        "split_bytes": number("splitBytes", DEFAULT_SPLIT_BYTES),
        "limit": decompression_limit(number("maxMessageSize", DEFAULT_MAX_MESSAGE_SIZE)),
    }


def register(spark) -> None:
    """Make ``spark.read.format("kseg")`` available in this session."""
    spark.dataSource.register(KsegDataSource)
