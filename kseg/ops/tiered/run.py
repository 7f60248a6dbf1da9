"""A ``kseg tiered`` run: the metadata folded, then each topic-partition checked (docs/tiered-metadata.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kseg.errors import InputError, KsegError
from kseg.ops.tiered.keys import match_objects
from kseg.ops.tiered.local import join_local, read_log_starts
from kseg.ops.tiered.objects import ReadManifest, object_problems
from kseg.ops.tiered.read import MetadataRead
from kseg.ops.tiered.reconcile import PartitionCheck, Problem, offset_problems, placed_in
from kseg.ops.tiered.store import StoreListing
from kseg.storage import files, outputs
from kseg.storage.outcome import exit_code
from kseg.storage.outputs import Destination
from kseg.storage.remote_keys import Layout
from kseg.storage.stores.find import Root, root
from kseg.words import plural


@dataclass
class TieredReport:
    """Every topic-partition's check, and what the run read and could not."""

    read: MetadataRead
    checks: list[PartitionCheck] = field(default_factory=list)
    store: StoreListing | None = None
    log_dir: Root | None = None  # --logdir, its store chosen once
    layout: Layout = "aiven"  # the key rule for segments the store was not listed for (or holds nothing of)
    problems: list[str] = field(default_factory=list)  # not of one topic-partition (undecodable records)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # inputs not read (exit 2)

    @property
    def orphan_bytes(self) -> int:
        return sum(c.orphan_bytes for c in self.checks if c.known)

    @property
    def orphan_objects(self) -> int:
        return sum(len(o.objects) for c in self.checks if c.known for o in c.orphans)

    @property
    def has_problems(self) -> bool:
        return bool(self.problems) or any(c.known and c.problems for c in self.checks)

    def exit_code(self) -> int:
        return exit_code(self.read.reads, problems=self.has_problems, failed=bool(self.errors))


def check_all(
    read: MetadataRead,
    partitions: int,
    store: StoreListing | None = None,
    log_dir: Root | None = None,
    layout: Layout = "aiven",
    read_manifest: ReadManifest | None = None,
) -> TieredReport:
    """Check every topic-partition of ``read`` (and, with ``store``, every segment object listed) among a
    metadata topic of ``partitions`` partitions; ``layout`` names the keys of objects not listed;
    ``read_manifest`` reads Aiven's manifests (their sizes checked; not read without it)."""
    report = TieredReport(read, store=store, log_dir=log_dir, layout=layout)
    report.notes.extend(read.notes)
    report.notes.extend(read.fold.all_notes())
    report.errors.extend(read.errors)
    report.problems.extend(read.fold.problems + read.fold.undecodable_tail())
    complete = set(read.partitions) - read.incomplete

    def known(topic_id: str, partition: int) -> bool:
        return placed_in(topic_id, partition, partitions) in complete

    checks: dict[tuple[str, int], PartitionCheck] = {}
    for tp in read.fold.partitions.values():
        check = checks[tp.topic_id, tp.partition] = PartitionCheck(tp, known=tp.metadata_partition in complete)
        check.problems.extend(Problem("transition", text) for text in tp.all_problems())
        expected = placed_in(tp.topic_id, tp.partition, partitions)
        if expected != tp.metadata_partition:
            report.notes.append(
                f"{tp.name} ({tp.topic_id}) is in {tp.metadata_partition}, Kafka's partitioner puts it in "
                f"{expected} with {partitions} partitions: is remote.log.metadata.topic.num.partitions "
                f"{partitions}? (--metadata-partitions)"
            )
        offset_problems(check)
    if store is not None:
        match_objects(checks, store, known)
        for check in list(checks.values()):
            object_problems(check, store, layout, read_manifest, report.errors)
        _note_unjudged(report, checks.values())
    if log_dir is not None:
        _join(report, checks.values(), log_dir)
    report.checks = sorted(checks.values(), key=lambda c: (c.tp.topic, c.tp.partition, c.tp.topic_id))
    return report


def _note_unjudged(report: TieredReport, checks: Iterable[PartitionCheck]) -> None:
    unjudged = [c for c in checks if not c.known and c.orphans]
    if unjudged:
        objects = sum(len(o.objects) for c in unjudged for o in c.orphans)
        n = len(unjudged)
        report.notes.append(
            f"{plural(objects, 'object')} of {plural(n, 'topic-partition')} whose metadata "
            "partition was not read (or not to its end): not judged"
        )


def _join(report: TieredReport, checks: Iterable[PartitionCheck], log_dir: Root) -> None:
    try:
        starts = read_log_starts(log_dir)
    except InputError:  # unreadable (the OS's reason): exit 2, never a verdict without it
        raise
    except KsegError as exc:
        report.notes.append(f"log-start-offset-checkpoint not read: {exc.describe()}")
        starts = {}
    for check in checks:
        if check.known:
            join_local(check, log_dir, starts, report.notes)


def check_log_dir(path: str) -> Root:
    """``--logdir`` checked before any work: an existing directory (:class:`InputError`: exit 2), its store
    chosen once for the join."""
    given = root(path)
    if not files.exists(path, store=given.store):
        raise InputError("no such file or directory", path=path)
    if not files.isdir(path, store=given.store):
        raise InputError("not a directory: give a broker's log directory (log.dirs)", path=path)
    return given


def check_report(report: Destination, inputs: list[str], force: bool) -> None:
    """``--report`` checked before any work: never inside an input, replaced only with ``force``."""
    outputs.refuse_on_inputs(report.path, inputs, "--report")
    outputs.check_file_target(report.path, force=force, option="--report")
