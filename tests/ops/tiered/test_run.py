"""``kseg tiered``'s fold and reconciliation on constructed clusters (tests/ops/tiered/scenario.py): the healthy
one is clean; each fault is found, named by its kind, and only it."""

from __future__ import annotations

import pytest

from kseg.decoders.remote import read_record
from kseg.ops.tiered.keys import expected_key
from kseg.ops.tiered.objects import read_manifest
from kseg.ops.tiered.read import read_metadata
from kseg.ops.tiered.run import TieredReport, check_all
from kseg.ops.tiered.store import StoreListing, list_store
from kseg.storage.remote_keys import Layout, object_key
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import root
from kseg.testing import remote_metadata as rm
from tests.ops.tiered import scenario as sc
from tests.ops.tiered.scenario import IDS, PARTITIONS, TOPIC, TOPIC_ID, Cluster, healthy


def run(tmp_path, cluster: Cluster, store: bool = True, logdir: bool = True) -> TieredReport:
    meta, store_root, log_dir = cluster.write(tmp_path)
    read = read_metadata([str(meta)], read_record)
    listing = _listing(str(store_root)) if store else None
    return check_all(
        read,
        PARTITIONS,
        listing,
        root(str(log_dir)) if logdir else None,
        read_manifest=lambda path: read_manifest(path, store_of(path)),
    )


def kinds(report: TieredReport) -> list[str]:
    return [p.kind for c in report.checks for p in c.problems] + ["undecodable"] * len(report.problems)


@pytest.mark.parametrize("layout", ["aiven", "local"])
def test_healthy_cluster_is_clean(tmp_path, layout: Layout) -> None:
    report = run(tmp_path, healthy(layout))
    assert kinds(report) == []
    assert report.exit_code() == 0
    (check,) = report.checks
    assert [s.segment_id for s in check.tp.live()] == [IDS["a"], IDS["b"], IDS["c"]]
    assert list(check.tp.deleted) == [IDS["old"]]
    assert check.local_start == 400 and check.log_start == 100
    assert check.tp.segments[IDS["c"]].epochs == {0: 300, 1: 350}
    assert report.notes == []


def test_metadata_alone(tmp_path) -> None:
    report = run(tmp_path, healthy(), store=False, logdir=False)
    assert kinds(report) == [] and report.exit_code() == 0
    assert report.checks[0].objects == {}


def test_missing_object_is_data_loss(tmp_path) -> None:
    cluster = healthy()
    cluster.drop_objects = (object_key("aiven", "", TOPIC, TOPIC_ID, 0, 200, IDS["b"], "log"),)
    report = run(tmp_path, cluster)
    assert kinds(report) == ["missing"]
    assert IDS["b"] in report.checks[0].problems[0].text and "data loss" in report.checks[0].problems[0].text
    assert report.exit_code() == 1


def test_all_objects_missing(tmp_path) -> None:
    cluster = healthy()
    cluster.stored.pop("a")
    report = run(tmp_path, cluster)
    assert kinds(report) == ["missing"]
    assert "holds no object" in report.checks[0].problems[0].text


def test_copy_that_never_finished_is_an_orphan(tmp_path) -> None:
    cluster = healthy()
    cluster.values.append(rm.segment_metadata(sc.seg("new"), 400, 499, size=sc.SIZE))
    cluster.stored["new"] = 400
    cluster.local_start = 500
    report = run(tmp_path, cluster)
    # the copy never finished: its offsets are not remote, and the local log starts past them
    assert sorted(kinds(report)) == ["local-gap", "orphan"]
    (orphan,) = report.checks[0].orphans
    assert orphan.state == "COPY_SEGMENT_STARTED"
    assert orphan.bytes == sc.OBJECT_BYTES and report.orphan_bytes == orphan.bytes


def test_objects_of_a_deleted_segment_are_orphans(tmp_path) -> None:
    cluster = healthy()
    cluster.stored["old"] = 0
    report = run(tmp_path, cluster)
    assert kinds(report) == ["orphan"]
    assert "deletion finished" in report.checks[0].problems[0].text


def test_objects_no_metadata_names(tmp_path) -> None:
    cluster = healthy()
    cluster.stored["stray"] = 7000
    report = run(tmp_path, cluster)
    assert kinds(report) == ["orphan"]
    assert report.checks[0].orphans[0].state is None and report.orphan_objects == 3


def test_objects_of_a_partition_whose_metadata_was_not_read_are_not_judged(tmp_path) -> None:
    cluster = healthy()
    meta, store_root, _ = cluster.write(tmp_path)
    # objects of partition 5 of the topic: in another metadata partition, which is not given
    other = [n for n in range(1, 40) if sc.metadata_partition(rm.uuid_bytes(TOPIC_ID), n, PARTITIONS) != 0]
    home = sc.metadata_partition(rm.uuid_bytes(TOPIC_ID), 0, PARTITIONS)
    p = next(n for n in other if sc.metadata_partition(rm.uuid_bytes(TOPIC_ID), n, PARTITIONS) != home)
    key = object_key("aiven", "", TOPIC, TOPIC_ID, p, 0, IDS["stray"], "log")
    (store_root / key).parent.mkdir(parents=True)
    (store_root / key).write_bytes(b"x")
    read = read_metadata([str(meta / f"__remote_log_metadata-{home}")], read_record)
    report = check_all(read, PARTITIONS, _listing(str(store_root)))
    assert kinds(report) == [] and report.exit_code() == 0  # found, but not judged: no verdict on it
    (unjudged,) = [c for c in report.checks if not c.known]
    assert [o.segment_id for o in unjudged.orphans] == [IDS["stray"]] and unjudged.status == "incomplete"
    assert report.orphan_bytes == 0
    assert any("not judged" in n for n in report.notes)


def test_overlap(tmp_path) -> None:
    cluster = healthy()
    cluster.values += sc.copied("new", 150, 250, epochs={1: 150})
    cluster.stored["new"] = 150
    report = run(tmp_path, cluster)
    assert kinds(report) == ["overlap", "overlap"]  # it overlaps a, and b overlaps it


def test_gap(tmp_path) -> None:
    cluster = healthy()
    cluster.values = [v for v in cluster.values if v not in sc.copied("b", 200, 299)]
    cluster.stored.pop("b")
    report = run(tmp_path, cluster)
    assert kinds(report) == ["gap"]
    assert "offsets 200-299" in report.checks[0].problems[0].text


def test_invalid_transitions(tmp_path) -> None:
    cluster = healthy()
    cluster.values += [
        rm.segment_update(sc.seg("a"), rm.DELETE_SEGMENT_FINISHED),  # FINISHED -> DELETE_FINISHED
        rm.segment_update(sc.seg("late"), rm.COPY_SEGMENT_FINISHED),  # no metadata
        rm.segment_update(sc.seg("old"), rm.COPY_SEGMENT_FINISHED),  # deletion already finished
        rm.segment_metadata(sc.seg("b"), 200, 299, state=rm.COPY_SEGMENT_FINISHED),  # added as FINISHED
    ]
    report = run(tmp_path, cluster)
    assert kinds(report) == ["transition"] * 4
    texts = [p.text for p in report.checks[0].problems]
    assert "COPY_SEGMENT_FINISHED -> DELETE_SEGMENT_FINISHED" in texts[0]
    assert "no metadata record added it" in texts[1] and "already finished" in texts[2]
    assert "addCopyInProgressSegment" in texts[3]
    assert report.checks[0].tp.segments[IDS["a"]].state == "COPY_SEGMENT_FINISHED"  # dropped, as Kafka does


def test_partition_deleted_with_segments_left(tmp_path) -> None:
    cluster = healthy()
    cluster.values += [rm.partition_delete(TOPIC_ID, TOPIC, 0, s) for s in (0, 1, 2)]
    cluster.values.append(rm.segment_update(sc.seg("a"), rm.DELETE_SEGMENT_STARTED))  # too late: dropped
    report = run(tmp_path, cluster, logdir=False)
    assert kinds(report) == ["transition", "transition", "orphan", "orphan", "orphan"]
    assert "after the partition's deletion finished" in report.checks[0].problems[1].text
    assert report.checks[0].tp.delete_state == "DELETE_PARTITION_FINISHED"


def test_local_gap_and_log_start(tmp_path) -> None:
    cluster = healthy()
    cluster.local_start, cluster.log_start = 450, 50
    report = run(tmp_path, cluster)
    assert kinds(report) == ["local-gap", "log-start"]
    assert "offsets 400-449" in report.checks[0].problems[0].text
    assert "offsets 50-99" in report.checks[0].problems[1].text


def test_local_size_mismatch(tmp_path) -> None:
    cluster = healthy("local")
    meta, store_root, log_dir = cluster.write(tmp_path)
    log = store_root / object_key("local", "", TOPIC, TOPIC_ID, 0, 100, IDS["a"], "log")
    log.write_bytes(b"\0" * 10)
    report = check_all(read_metadata([str(meta)], read_record), PARTITIONS, _listing(str(store_root)))
    assert kinds(report) == ["size"]


def test_undecodable_record(tmp_path) -> None:
    cluster = healthy()
    cluster.values.append(b"\x01\x09\x00garbage")
    report = run(tmp_path, cluster)
    assert kinds(report) == ["undecodable"]
    assert "Unknown metadata id 9" in report.problems[0]
    assert report.exit_code() == 1


def test_aiven_custom_metadata_names_the_key(tmp_path) -> None:
    cluster = healthy()
    custom = rm.aiven_custom_metadata(remote_size=4321, object_prefix="p/", object_key="k/x")
    cluster.values.append(rm.segment_update(sc.seg("c"), rm.DELETE_SEGMENT_STARTED, custom=custom))
    report = run(tmp_path, cluster, store=False, logdir=False)
    c = report.checks[0].tp.segments[IDS["c"]]
    assert c.custom is not None and (c.custom.remote_size, c.custom.object_prefix, c.custom.object_key) == (
        4321,
        "p/",
        "k/x",
    )
    assert expected_key(report.checks[0].tp, c) == "p/k/x.log"
    # object_prefix: the bucket's
    assert expected_key(report.checks[0].tp, c, listed=_listed("s3://b/root")) == "s3://b/p/k/x.log"
    assert kinds(report) == []  # c's deletion started: it is no longer served, and no later segment follows it
    assert [s.segment_id for s in sc.finished(report.checks[0].tp)] == [IDS["a"], IDS["b"]]


def test_aiven_custom_metadata_with_one_field_falls_back_as_the_plugin_does(tmp_path) -> None:
    """ObjectKeyFactory.key: a missing ``object_prefix`` is the configured prefix (the store's root here), a
    missing ``object_key`` the main path the layout gives (``<topic>-<topicId>/<partition>/<offset>-<id>``)."""
    cluster = healthy()
    only_key = rm.aiven_custom_metadata(remote_size=1, object_key="k/x")
    only_prefix = rm.aiven_custom_metadata(remote_size=1, object_prefix="old/")
    cluster.values.append(rm.segment_update(sc.seg("c"), rm.DELETE_SEGMENT_STARTED, custom=only_key))
    report = run(tmp_path, cluster, store=False, logdir=False)
    tp = report.checks[0].tp
    c = tp.segments[IDS["c"]]
    assert expected_key(tp, c, listed=_listed("s3://b/root")) == "s3://b/root/k/x.log"
    c.custom = None
    main = expected_key(tp, c).removesuffix(".log")  # the layout's main path
    c.custom = rm_custom(only_prefix)
    assert expected_key(tp, c, listed=_listed("s3://b/root")) == f"s3://b/old/{main}.log"


def _listed(root: str) -> StoreListing:
    """An empty listing of the store at ``root`` (the root and store the keys are made under)."""
    return StoreListing(root, store_of(root))


def _listing(root: str) -> StoreListing:
    """The store at ``root`` listed, its store chosen once as ``--remote``'s is."""
    return list_store(root, store_of(root))


def rm_custom(data: bytes):
    from kseg.format.rsm_custom import parse_custom_metadata

    return parse_custom_metadata(data)


def test_aiven_remote_size(tmp_path) -> None:
    """remote_size is the bytes uploaded (SegmentCustomMetadataBuilder.totalSize): right, then wrong."""
    cluster = healthy()
    whole = sc.OBJECT_BYTES  # .log, .indexes, .rsm-manifest
    for n, size in ((0, whole), (1, whole + 1)):
        cluster.values.append(
            rm.segment_update(sc.seg("a"), rm.COPY_SEGMENT_FINISHED, custom=rm.aiven_custom_metadata(remote_size=size))
        )
        report = run(tmp_path / str(n), cluster)
        assert kinds(report) == ([] if n == 0 else ["size"])


def _objects_of(store_root, name: str, start: int, partition: int = 0) -> list:
    """The paths of segment ``name``'s objects (Aiven's layout) at ``start`` in ``partition``."""
    return [
        store_root / object_key("aiven", "", TOPIC, TOPIC_ID, partition, start, IDS[name], suffix)
        for suffix in sc.AIVEN_SUFFIXES
    ]


def _reconcile(tmp_path, change) -> TieredReport:
    """The healthy cluster written, its store changed by ``change(store_root)``, then checked."""
    meta, store_root, log_dir = healthy().write(tmp_path)
    change(store_root)
    read = read_metadata([str(meta)], read_record)
    return check_all(
        read,
        PARTITIONS,
        _listing(str(store_root)),
        root(str(log_dir)),
        read_manifest=lambda path: read_manifest(path, store_of(path)),
    )


def _problems(report: TieredReport) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in report.checks:
        for p in c.problems:
            out.setdefault(c.tp.name, []).append((p.kind, p.text))
    return out


def test_a_copy_under_another_partition_prefix_is_an_orphan(tmp_path) -> None:
    """Segment a's objects stay at their keys under .../0/ and are copied under .../7/ too: orders-0 is clean,
    the copies are orphans of orders-7 (no fetch reads them), named by the key the RSM does fetch."""

    def copy(root) -> None:
        for src, dst in zip(_objects_of(root, "a", 100), _objects_of(root, "a", 100, 7), strict=True):
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())

    problems = _problems(_reconcile(tmp_path, copy))
    assert list(problems) == ["orders-7"]
    ((kind, text),) = problems["orders-7"]
    assert kind == "orphan" and f"segment {IDS['a']}: 3 objects" in text and "/7/" in text
    assert "not the key the RSM fetches" in text and "of orders-0 (COPY_SEGMENT_FINISHED, offsets 100-199)" in text
    assert text.endswith(f"/0/{100:020d}-{IDS['a']}.log")


def test_objects_renamed_to_another_start_offset_are_missing_and_orphans(tmp_path) -> None:
    def rename(root) -> None:
        for src, dst in zip(_objects_of(root, "a", 100), _objects_of(root, "a", 150), strict=True):
            src.rename(dst)

    problems = _problems(_reconcile(tmp_path, rename))
    assert sorted(kind for kind, _ in problems["orders-0"]) == ["missing", "orphan"]
    missing = next(text for kind, text in problems["orders-0"] if kind == "missing")
    assert f"segment {IDS['a']} (offsets 100-199)" in missing and "holds no object of it at its key" in missing
    assert f"{100:020d}-{IDS['a']}" in missing
    orphan = next(text for kind, text in problems["orders-0"] if kind == "orphan")
    assert f"{150:020d}" not in orphan.split("from:")[1]  # the key fetched, not the renamed one


def test_objects_moved_to_another_partition(tmp_path) -> None:
    """orders-0 misses a's objects (data loss) and its row shows the key fetched, not the foreign one."""

    def move(root) -> None:
        for src, dst in zip(_objects_of(root, "a", 100), _objects_of(root, "a", 100, 7), strict=True):
            dst.parent.mkdir(parents=True, exist_ok=True)
            src.rename(dst)

    report = _reconcile(tmp_path, move)
    problems = _problems(report)
    assert [kind for kind, _ in problems["orders-0"]] == ["missing"]
    assert [kind for kind, _ in problems["orders-7"]] == ["orphan"]
    check = next(c for c in report.checks if c.tp.name == "orders-0")
    assert check.objects[IDS["a"]] == []
    from kseg.render.tiered import segment_row

    row = segment_row(check, check.tp.segments[IDS["a"]], report)
    assert row["objects"] == 0 and "/0/" in row["objectKey"] and "/7/" not in row["objectKey"]


def test_an_empty_log_object_of_a_2048_byte_segment(tmp_path) -> None:
    report = _reconcile(tmp_path, lambda root: _objects_of(root, "b", 200)[0].write_bytes(b""))
    problems = _problems(report)["orders-0"]
    assert [kind for kind, _ in problems] == ["size"]
    assert problems[0][1].endswith(
        f"{200:020d}-{IDS['b']}.log: 0 bytes, expected 2048 (segment {IDS['b']}, segmentSizeInBytes=2048): "
        "the size its manifest's chunk index states"
    )


def test_manifests_state_the_sizes(tmp_path) -> None:
    """A manifest of a 1024-byte segment (the metadata says 2048, the .log holds 2048), an .indexes object cut
    short, a manifest that is no JSON."""

    def change(root) -> None:
        a, b, c = (_objects_of(root, n, s) for n, s in (("a", 100), ("b", 200), ("c", 300)))
        small = sc.MANIFEST.replace(b'"originalFileSize":2048', b'"originalFileSize":1024')
        a[2].write_bytes(small.replace(b'"finalTransformedChunkSize":2048', b'"finalTransformedChunkSize":1024'))
        b[1].write_bytes(b"\0" * 60)
        c[2].write_bytes(b"{not json")

    texts = _problems(_reconcile(tmp_path, change))["orders-0"]
    assert [kind for kind, _ in texts] == ["size", "size", "size", "manifest"], texts
    assert "chunkIndex.originalFileSize 1024, the metadata says segmentSizeInBytes=2048" in texts[0][1]
    assert ".log: 2048 bytes, expected 1024" in texts[1][1]
    assert ".indexes: 60 bytes, expected 64" in texts[2][1]
    assert ".rsm-manifest: not JSON" in texts[3][1] and "the RSM cannot read segment" in texts[3][1]


def test_refused_events_are_listed_up_to_a_bound_then_counted(tmp_path) -> None:
    from kseg.ops.tiered.state import MAX_LISTED

    cluster = healthy()
    cluster.values += [rm.segment_update(sc.seg("new"), rm.COPY_SEGMENT_FINISHED)] * (MAX_LISTED + 5)
    report = run(tmp_path, cluster, store=False, logdir=False)
    texts = [p.text for p in report.checks[0].problems]
    assert len(texts) == MAX_LISTED + 1 and texts[-1] == "5 more refused events (not listed)"


def test_the_fold_remembers_only_the_deletions_asked(tmp_path) -> None:
    """One entry per live segment: a deletion finished is counted, its id kept only when asked (the store
    holds objects of it)."""
    meta, _, _ = healthy().write(tmp_path)
    (tp,) = read_metadata([str(meta)], read_record, remember=frozenset()).fold.partitions.values()
    assert tp.deleted == {} and tp.deleted_count == 1
    (tp,) = read_metadata([str(meta)], read_record, remember=frozenset({IDS["old"]})).fold.partitions.values()
    assert tp.deleted == {IDS["old"]: "DELETE_SEGMENT_FINISHED"}
