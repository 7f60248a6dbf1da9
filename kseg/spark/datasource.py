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
``topic``, ``partition``, ``logDir``  comma-separated values of those columns: only these partitions are
                          read, chosen from the listing's paths before any segment is opened
``fromOffset``, ``toOffset``  inclusive offset range (segments chosen by their names; exact to the record,
                          inside a v0/v1 compressed wrapper too)
``fromTime``, ``toTime``      ``[from, to)`` in epoch ms or ISO-8601 with a zone (a segment's start found
                          by its time index)
``keyDecoder``, ``valueDecoder``  adds ``keyText``/``valueText`` (string, hex, base64, json, module:function);
                          ``registry`` adds the typed ``keyDecoded``/``valueDecoded`` columns too
``schemas``, ``schemasContext``, ``framing``  with ``registry``: the ``_schemas`` log (else the one beside
                          the first path), the context and how payloads carry their schema id
                          (``confluent``, ``apicurio``...: ``--framing``, docs/schemas.md)
``keyMessage``, ``valueMessage``  with ``registry`` and a Protobuf subject: the message of the typed
                          column (``--key-message``/``--value-message``; default the file's first)
``onCorruption``          ``skip`` (default), ``fail`` or ``keep``
``onUnreadable``          ``fail`` (default: a segment a task cannot read fails the query, naming it and
                          the cause) or ``rows`` (one row for it, its reason in a last column
                          ``unreadable``; never a ``corruption`` row; a task whose first reads all fail
                          the same way stops with that reason)
``replicas``              ``all`` (default: every replica's rows) or ``one``: one copy per topic-partition,
                          the most complete undamaged replica as ``kseg diff`` reads them, chosen at
                          ``load()`` on the driver (:mod:`kseg.ops.diff.choose`; which and why printed on
                          the driver's stderr)
``splitBytes``            segments larger than this are read by several tasks (default 128 MiB)
``maxMessageSize``        as ``--max-message-size`` (default 5 MiB)

Planning is split between the driver and the tasks.  The driver lists once
per ``load()`` (each path log directory by log directory, a few at once, held
compactly: :mod:`kseg.storage.listing`), keeps the partitions the options
choose, prunes segments outside an offset range by their names and packs
*segment units* -- a segment, or one ``splitBytes`` band of a large one --
into tasks of about ``splitBytes``, small partitions together, each task
given its units as its share of the listing (:mod:`kseg.spark.deal`;
:class:`KsegDataSource` says how the listing travels from ``load()`` to each
query).  Index reads, cuts at offset-index positions and
``fromTime``/``fromOffset`` seeks happen in the tasks
(:func:`kseg.ops.export.export.unit_splits`).

No ``where`` filter is pushed into the reader.  Spark (4.0 to 4.3) keeps the
read plan a pushdown returns on the *DataFrame's* data source
(``PythonDataSourceV2.setReadInfo``) and reuses it for any later query on
that DataFrame with no filter it can push, so a pruned read would be the
answer to ``df.count()`` after ``df.where("offset >= 300").count()``
(issue 39).  Spark filters the rows; pruning is asked for with the options,
which belong to the load.  Without ``pushFilters`` the source also works with
``spark.sql.python.filterPushdown.enabled`` off.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

NAME = "kseg"
#: At most this many segment units in one task: small segments cost requests, not bytes (an index
#: and a log or two each), so ten thousand of them are forty tasks, not one (docs/export.md, "Splits").
UNITS_PER_TASK = 256
#: ``onUnreadable``: a segment the tasks cannot read fails the query (``fail``), or is one ``unreadable`` row.
ON_UNREADABLE = ("fail", "rows")
#: ``replicas``: every replica's rows (``all``), or one copy per topic-partition (``one``: kseg diff's choice).
REPLICAS = ("all", "one")
#: ``onUnreadable=rows``: a task whose first this-many units all fail with the same reason stops with it
#: (no executor credentials: each read would retry for seconds, and every one would say the same).
SAME_FAILURES_STOP = 3
#: Spark's switch that makes a Python worker's error its message alone, no traceback (:func:`register`).
ONE_LINE_ERRORS_CONF = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"


class UnitPartition(InputPartition):
    """One task's segment units as its share of the listing (a :class:`~kseg.spark.deal.Deal`: the task
    makes its :class:`~kseg.ops.export.export.SegmentUnit` s)."""

    def __init__(self, deal) -> None:
        super().__init__(deal)


class KsegDataSource(DataSource):
    """``format("kseg")``: records of Kafka log segments.

    Spark makes the instance once per ``load()`` (in a Python worker on the driver), pickles it, and
    hands that pickle to every planning of a query on the DataFrame (``pyspark.sql.worker.
    create_data_source``, ``plan_data_source_read``, ``data_source_pushdown_filters``); so the
    listing made here, in ``__init__``, is the listing of every query of the load: one per load,
    whatever the filters.  A module-level cache could not do this: planning runs in whichever
    Python worker Spark starts or reuses.  The instance is pickled once more, inside the read
    function sent to the tasks: the listing is left out of that pickle (:meth:`__getstate__`)."""

    def __init__(self, options) -> None:
        super().__init__(options)
        from kseg.storage.context import ReadContext
        from kseg.storage.private_keys import read_keys

        self.settings = read_options(dict(options))  # a bad option fails the load, naming it
        # option rsmKey "ID=FILE,...": read here, once per load, and held by the listing's stores (the tasks'
        # shares of it carry them): two loads in one process read each with its own keys
        self.context = ReadContext(keys=read_keys(rsm_keys(_option(dict(options), "rsmKey"))))
        self.listing: list | None = list_inputs(self.settings, self.context)
        # the registry decoder: _schemas replayed here, once per load, and shipped to the tasks (its store)
        self.registry = registry_state(dict(options), self.settings, self.listing)
        self.planned = False  # a reader was made: the pickles from now on go to the tasks

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        from kseg.render.export import UNREADABLE_COLUMN, spark_ddl

        marked = self.settings["on_unreadable"] == "rows"
        if self.registry is None:
            return spark_ddl(_decoded(self.options), unreadable=marked)
        from kseg.decoders.registry.typed import spark_sql

        typed = ", ".join(f"`{f.name}` {spark_sql(f.type)}" for t in typed_of(self.registry) for f in t.fields(True))
        unreadable = f", `{UNREADABLE_COLUMN[0]}` {UNREADABLE_COLUMN[2]}" if marked else ""
        return spark_ddl(True) + ", " + typed + unreadable

    def reader(self, schema) -> "KsegReader":
        self.planned = True
        return KsegReader(dict(self.options), self.listing, self.registry)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if self.planned:  # the read function's copy: the tasks need the options, not the listing
            state["listing"] = None
        return state


def list_inputs(settings: dict, context: Any = None) -> list:
    """The load's listing, compact (:class:`~kseg.storage.listing.Listed`), made once on the driver (its
    partitions holding their store under the load's read context) and pruned by the ``topic``,
    ``partition`` and ``logDir`` options (:func:`chosen`) before any segment is opened; an input that
    cannot be listed fails the load, naming it and the cause."""
    from kseg.errors import KsegError
    from kseg.storage.listing import Listed
    from kseg.storage.stores.find import discover_as

    try:
        parts = discover_as(settings["paths"], [], Listed, context)  # each packed as it is found
    except KsegError as exc:
        raise OSError(f"kseg data source: {exc.describe()}") from None
    parts = [part for part in parts if chosen(part, settings)]
    for part in parts:
        if part.error is not None:
            raise OSError(f"kseg data source: {part.error}")
    if settings["replicas"] == "one":
        from kseg.ops.diff.choose import one_replica

        try:
            parts, kept = one_replica(parts)
        except KsegError as exc:
            raise OSError(f"kseg data source: replicas=one: {exc.describe()}") from None
        for line in kept:  # the driver's console (the planning worker's stderr)
            print(f"kseg data source: replica: {line}", file=sys.stderr, flush=True)
    return parts


def chosen(part, settings: dict) -> bool:
    """Whether the listed partition ``part`` is one the ``topic``/``partition``/``logDir`` options ask for
    (the values of its rows' ``topic``, ``partition`` and ``logDir`` columns, known from its path)."""
    from kseg.ops.export.export import topic_partition

    topics, numbers, log_dirs = settings["topics"], settings["partitions"], settings["log_dirs"]
    if topics is None and numbers is None and log_dirs is None:
        return True
    topic, number = topic_partition(part.name)
    if topics is not None and topic not in topics:
        return False
    if numbers is not None and number not in numbers:
        return False
    return log_dirs is None or part.log_dir.rstrip("/") in log_dirs


class KsegReader(DataSourceReader):
    def __init__(self, options: dict, listing: list | None = None, registry: dict | None = None) -> None:
        from kseg.storage.context import ReadContext
        from kseg.storage.private_keys import read_keys

        self.options = options
        self.registry = registry  # :func:`registry_state`: the replayed store, the topic, the roles
        self.settings = read_options(options)
        self.listing = listing  # the load's (None: listed again here)
        # option rsmKey "ID=FILE,...": read where the reader is made (the driver), shipped inside its context
        self.context = ReadContext(keys=read_keys(rsm_keys(_option(options, "rsmKey"))))
        self.pushed = False  # an offset/timestamp filter was pushed: corruption rows are not yielded

    def __getstate__(self) -> dict:
        return {**self.__dict__, "listing": None}  # pickled into the read function: the tasks list nothing

    def partitions(self) -> list[UnitPartition]:
        """The load's listing (no request) pruned by the ranges and packed into tasks
        (:func:`~kseg.spark.deal.packing`), each task its share of the listing
        (:func:`~kseg.spark.deal.deal_in_order`): no unit object held."""
        from kseg.spark.deal import deal_in_order, packing

        s = self.settings
        listing = self.listing if self.listing is not None else list_inputs(s, self.context)
        dealt = deal_in_order(listing, s["ranges"], s["split_bytes"], packing(s["split_bytes"], UNITS_PER_TASK))
        return [UnitPartition(d) for d in dealt]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        from kseg.storage.context import under

        if partition is None or partition.value is None:  # no split at all: Spark still reads once
            return
        yield from under(self.context, self._rows(partition))  # a read given no store reads with these keys

    def _rows(self, partition: InputPartition) -> Iterator[Any]:
        from kseg.errors import InputError
        from kseg.ops.export.export import unit_splits
        from kseg.render.export import RowBuilder, split_facts

        s = self.settings
        key_fn, value_fn = _decoder_functions(self.options, self.registry)
        typed = () if self.registry is None else typed_of(self.registry)  # made once a task (not pickled)
        marked = s["on_unreadable"] == "rows"
        failures = SameFailures(SAME_FAILURES_STOP)
        for unit in partition.value.units(s["ranges"], s["split_bytes"]):
            try:
                for split in unit_splits(unit, s["ranges"], s["split_bytes"], s["limit"]):
                    plain = key_fn is None and value_fn is None and not typed  # the engine's columns
                    facts = split_facts(
                        split, s["ranges"], s["limit"], s["on_corruption"], columns=plain
                    )  # exact (issue 39)
                    builder = RowBuilder(split, key_fn, value_fn, unreadable=marked, spark=True, typed=typed)
                    yield from builder.batches(facts)
                failures.read()
            except InputError as exc:  # no credentials, access denied, the network: not a corruption
                if not marked:
                    raise  # the query fails, naming the object and the cause
                failures.failed(exc)  # the first reads all failed the same way: stop, saying why
                where = unit.split(0, None, 0)
                builder = RowBuilder(where, key_fn, value_fn, unreadable=True, spark=True, typed=typed)
                yield builder.to_arrow([builder.unreadable_row(f"not read: {exc.describe()}")])


class SameFailures:
    """A task's first reads: when the first ``most`` all fail for the same reason (no credentials on the
    executors, a bucket that is gone), :meth:`failed` raises that reason instead of letting every
    read of the task retry and fail the same way; one read that succeeds ends the watch."""

    def __init__(self, most: int) -> None:
        self.most, self.reasons = most, 0
        self.reason: str | None = None
        self.watching = True

    def read(self) -> None:
        self.watching = False

    def failed(self, exc) -> None:
        from kseg.errors import InputError

        if not self.watching:
            return
        if self.reason is not None and exc.message != self.reason:
            self.watching = False
            return
        self.reason, self.reasons = exc.message, self.reasons + 1
        if self.reasons >= self.most:
            raise InputError(
                f"stopped: the first {self.reasons} reads all failed the same way ({self.reason}); "
                f"last: {exc.describe()}"
            ) from None


def _option(options: Mapping[str, str], name: str) -> str | None:
    """Spark lower-cases option keys in some versions: look both ways."""
    for key in (name, name.lower()):
        if key in options and options[key] is not None:
            return options[key]
    return None


def _decoded(options: Mapping[str, str]) -> bool:
    return _option(options, "keyDecoder") is not None or _option(options, "valueDecoder") is not None


def _decoder_functions(options: dict, registry: dict | None = None) -> tuple[Any, Any]:
    from kseg.decoders.simple import resolve

    key, value = (_option(options, name) for name in ("keyDecoder", "valueDecoder"))
    if registry is not None:
        from kseg.decoders.registry import Registry, RegistryDecoder

        shared = Registry(registry["store"], registry["context"], framing=registry["framing"])
        made = {role: RegistryDecoder(shared, role) for role in registry["roles"]}
        return (
            made.get("key") or (None if key is None else resolve(key)),
            made.get("value") or (None if value is None else resolve(value)),
        )
    return (None if key is None else resolve(key)), (None if value is None else resolve(value))


REGISTRY = "registry"


def registry_state(options: dict, settings: dict, listing: list | None) -> dict | None:
    """Options ``keyDecoder``/``valueDecoder`` = ``registry``: the ``schemas`` option's ``_schemas`` log
    (else the one beside the first path), replayed on the driver once per load, the topics of the
    load and the roles -- what the tasks need to make the typed columns (docs/schemas.md).  An option
    or a source that does not do fails the load, naming why."""
    asked = (("key", "keyDecoder"), ("value", "valueDecoder"))
    roles = tuple(role for role, name in asked if _option(options, name) == REGISTRY)
    if not roles:
        for name in ("schemas", "framing"):
            if _option(options, name) is not None:
                raise ValueError(f"kseg data source: option {name} is for keyDecoder/valueDecoder registry")
        return None
    from kseg.decoders.registry import INSTALL_HINT, open_registry
    from kseg.decoders.registry.source import beside
    from kseg.decoders.registry.typed_topics import typed_columns
    from kseg.errors import KsegError
    from kseg.ops.export.export import topic_partition

    context = _option(options, "schemasContext") or "."
    framing = _option(options, "framing") or "confluent"
    from kseg.decoders.registry.framing import FRAMINGS

    if framing not in FRAMINGS:
        raise ValueError(f"kseg data source: option framing {framing!r} is none of {', '.join(FRAMINGS)}")
    source = _option(options, "schemas") or beside(settings["paths"])
    if source is None:
        raise ValueError("kseg data source: the registry decoder needs option schemas: no _schemas-0 beside the data")
    try:
        registry, _ = open_registry(source, context, framing=framing)
    except KsegError as exc:
        raise OSError(f"kseg data source: {exc.describe()}") from None
    missing = registry.missing_modules()
    if missing:
        raise ValueError(f"kseg data source: the registry decoder needs {', '.join(missing)}: {INSTALL_HINT}")
    topics = sorted({topic_partition(p.name)[0] for p in listing or () if p.error is None})
    asked_messages = {role: _option(options, f"{role}Message") for role in roles}
    messages = {role: name for role, name in asked_messages.items() if name}
    state = {
        "store": registry.store,
        "context": context,
        "roles": roles,
        "topics": topics,
        "framing": framing,
        "messages": messages,
    }
    try:
        typed_columns(
            registry.store, roles, topics, context, framing, messages=messages
        )  # checked here: the load fails, not the tasks
    except ValueError as exc:
        raise ValueError(f"kseg data source: {exc} (option topic)") from None
    return state


def typed_of(state: dict) -> tuple:
    from kseg.decoders.registry.typed_topics import typed_columns

    return typed_columns(
        state["store"], state["roles"], state["topics"], state["context"], state["framing"], messages=state["messages"]
    )


def rsm_keys(value: str | None) -> dict[str, str]:
    """Option ``rsmKey``: ``KEYPAIRID=FILE`` pairs, comma-separated (``--rsm-key`` of the CLI).  One
    option, not ``rsmKey.<id>``: Spark lower-cases option names, and a key pair id keeps its case."""
    keys: dict[str, str] = {}
    for pair in (value or "").split(","):
        if not pair.strip():
            continue
        name, sep, path = pair.strip().partition("=")
        if not sep or not name or not path:
            raise ValueError(f"kseg data source: option rsmKey: expected KEYPAIRID=FILE[,...], found {pair!r}")
        keys[name] = path
    return keys


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

    def names(name: str) -> frozenset[str] | None:
        value = _option(options, name)
        if value is None:
            return None
        chosen = frozenset(v.strip().rstrip("/") if name == "logDir" else v.strip() for v in str(value).split(","))
        return chosen - {""} or None

    numbers = names("partition")
    try:
        partitions = None if numbers is None else frozenset(int(n) for n in numbers)
    except ValueError:
        raise ValueError(f"kseg data source: option partition: integers, comma-separated, got {numbers!r}") from None
    log_dirs = names("logDir")
    on_corruption = (_option(options, "onCorruption") or "skip").lower()
    if on_corruption not in ON_CORRUPTION:
        raise ValueError(f"kseg data source: onCorruption must be skip, fail or keep, got {on_corruption!r}")
    on_unreadable = (_option(options, "onUnreadable") or "fail").lower()
    if on_unreadable not in ON_UNREADABLE:
        raise ValueError(f"kseg data source: onUnreadable must be fail or rows, got {on_unreadable!r}")
    replicas = (_option(options, "replicas") or "all").lower()
    if replicas not in REPLICAS:
        raise ValueError(f"kseg data source: replicas must be all or one, got {replicas!r}")
    return {
        "paths": paths,
        "replicas": replicas,
        "ranges": ranges,
        "topics": names("topic"),
        "partitions": partitions,
        "log_dirs": None if log_dirs is None else frozenset(absolute(d).rstrip("/") for d in log_dirs),
        "on_corruption": on_corruption,
        "on_unreadable": on_unreadable,
        "split_bytes": number("splitBytes", DEFAULT_SPLIT_BYTES),
        "limit": decompression_limit(number("maxMessageSize", DEFAULT_MAX_MESSAGE_SIZE)),
    }


def register(spark, one_line_errors: bool = True) -> None:
    """Make ``spark.read.format("kseg")`` available in this session.  ``one_line_errors``: set
    :data:`ONE_LINE_ERRORS_CONF`, so a data-source error (a path that cannot be listed, an object a task
    cannot read) reaches the user as its message alone, not under a Python traceback (the setting is
    the session's: a Python UDF's error is then its message alone too)."""
    if one_line_errors:
        spark.conf.set(ONE_LINE_ERRORS_CONF, "true")
    spark.dataSource.register(KsegDataSource)
