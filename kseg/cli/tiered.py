"""``kseg tiered``: the remote segments ``__remote_log_metadata`` holds, reconciled with the store and a local log."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    json_report_options,
    on_spark,
    paths_argument,
    reading_options,
    spark_options,
)
from kseg.cli.params import Int
from kseg.limits import INT32_MAX, decompression_limit

if TYPE_CHECKING:
    from kseg.storage.context import Store


@parts.command(context_settings=HELP)
@paths_argument
@parts.option(
    "--remote",
    metavar="URI",
    help="The remote store's root (the RSM's key prefix or LocalTieredStorage's directory; a local directory "
    "or s3://, gs://... URI), listed once recursively: missing objects, orphans, their size.",
)
@parts.option(
    "--logdir",
    "log_dir",
    metavar="PATH",
    help="A broker's log directory: each topic-partition's local log start against its highest remote offset.",
)
@parts.option(
    "--metadata-partitions",
    type=Int(1, INT32_MAX),
    default=50,
    show_default=True,
    help="remote.log.metadata.topic.num.partitions: where Kafka's partitioner puts each topic-partition.",
)
@parts.option(
    "--layout",
    type=click.Choice(["aiven", "local"]),
    default="aiven",
    show_default=True,
    help="The RSM's key layout for the object keys shown when the store is not listed and the custom "
    "metadata names none: Aiven's tiered-storage plugin or Kafka's LocalTieredStorage.",
)
@json_report_options("partition, segment, orphan and summary")
@reading_options
@spark_options
def tiered(
    paths: tuple[str, ...],
    remote: str | None,
    log_dir: str | None,
    metadata_partitions: int,
    layout: str,
    report_path: str | None,
    force: bool,
    max_message_size: int,
    output_format: str,
    run: Run,
    spark: Spark,
) -> None:
    """The remote log segments of every topic-partition, folded from the
    __remote_log_metadata partitions (each PATH a log root or such a partition
    directory) as Kafka's RemoteLogMetadataCache folds them: state, offsets,
    leader epochs, sizes, object keys; invalid state transitions, overlaps and
    gaps.  With --remote, the store reconciled: metadata whose objects are
    missing (data loss), objects no finished copy holds (orphans, with their
    size); with --logdir, the local log joined; with --spark, the store listed
    on the cluster, a task per group of top-level prefixes (docs/tiered-metadata.md).

    \b
    Exit codes:
      0  everything read, no problem found
      1  problems, or a metadata segment not read past a corrupt or partial batch
      2  usage error, or an input could not be read or listed (the OS's reason)
    """
    from kseg.decoders.remote import read_record
    from kseg.decoders.remote_view import view
    from kseg.jsonlines import dumps
    from kseg.ops.tiered.objects import read_manifest
    from kseg.ops.tiered.read import read_metadata
    from kseg.ops.tiered.run import check_all, check_log_dir, check_report
    from kseg.ops.tiered.store import list_store
    from kseg.render import tiered as render
    from kseg.render.sink import write_all
    from kseg.storage.outputs import destination
    from kseg.storage.stores.discover import store_of

    if force and not report_path:
        run.fail("--force replaces an existing --report file; give it with --report")
    spark.check(run)
    if spark.on and not remote:
        run.fail("--spark lists the store on the cluster: give it with --remote URI")
    inputs = list(paths) + [p for p in (remote, log_dir) if p]
    report_to = destination(report_path) if report_path else None  # its store chosen once, here
    if report_to is not None:
        check_report(report_to, inputs, force)
    local = check_log_dir(log_dir) if log_dir else None  # its store chosen once, here
    objects: Store | None = None  # --remote's store, chosen once: listed, its keys compared, its manifests read
    store = None  # the store listed first: the fold remembers the deletion of the segments it holds objects of
    if remote:
        objects = store_of(remote)
        store = _spark_listing(remote, objects, spark) if spark.on else list_store(remote, objects)
    remember = frozenset(store.by_segment) if store is not None else frozenset()
    # a path missing or holding no metadata: exit 2 (ending.fatal)
    read = read_metadata(list(paths), read_record, decompression_limit(max_message_size), remember, view)
    report = check_all(  # manifests read through their store, under this command's read context
        read,
        metadata_partitions,
        store,
        local,
        "local" if layout == "local" else "aiven",
        None if objects is None else (lambda path: read_manifest(path, objects)),
    )
    rows = [dumps(row) for row in render.rows(report)]
    if report_to is not None:
        report_to.write_lines(rows, replace=force)
    if output_format == "json":
        lines = rows
    else:
        lines = render.text_lines(report) + [render.summary_line(report)]
    write_all(run.out, ("\n".join(lines) + "\n").encode("utf-8", "replace"))
    run.notes(report.notes)
    for text in report.errors:
        run.error(text)
    for r in read.reads:
        if not r.complete:
            run.error(r.describe())
    sys.exit(report.exit_code())


def _spark_listing(remote: str, objects: Store, spark_options: Spark) -> Any:
    """The store listed by the executors (kseg.spark.tiered_job); a local root made absolute for them."""
    from kseg.spark import tiered_job
    from kseg.spark.paths import absolute

    return on_spark(spark_options, "tiered", lambda spark: tiered_job.list_store(spark, absolute(remote), objects))
