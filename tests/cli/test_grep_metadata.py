"""``kseg grep --key``: the topics' partition counts read from the cluster metadata (a ``__cluster_metadata-0``
log among the inputs, or ``--metadata``), replayed as ``kseg metadata`` replays it: the metadata's count
wins over the directories', a disagreement said; a replay that stops short is not used; a ``--metadata``
that cannot be read is exit 2.  The metadata logs are written with :mod:`tests.ops.metadata.build`, the
topic with Kafka's partitioner (:mod:`tests.cli.grep_data`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kseg.ops.grep.partitioner import partition_for_key
from tests.cli.grep_data import PARTITIONS, TOPIC, Written, write_topic
from tests.conftest import run_cli
from tests.ops.metadata.build import Log, record, uuid

ORDERS = uuid(7001)
HERE = 4  # a broker holding partitions 0..3 of the six: they look like a topic of four


def _metadata(directory: Path, partitions: int, extra: int = 0) -> Path:
    """A ``__cluster_metadata-0`` whose image has ``orders`` with ``partitions`` partitions (``extra`` of
    them added by a later batch, as ``kafka-topics --alter --partitions`` adds them)."""
    lg = Log()
    lg.batch(record("FeatureLevelRecord", name="metadata.version", featureLevel=21))

    def part(n: int) -> bytes:
        return record(
            "PartitionRecord",
            partitionId=n,
            topicId=ORDERS,
            replicas=[1],
            isr=[1],
            leader=1,
            leaderEpoch=0,
            partitionEpoch=0,
        )

    first = partitions - extra
    lg.batch(record("TopicRecord", name=TOPIC, topicId=ORDERS), *(part(n) for n in range(first)))
    if extra:
        lg.batch(*(part(n) for n in range(first, partitions)))
    return lg.write(directory / "__cluster_metadata-0")


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> tuple[Path, list[Written]]:
    root = tmp_path_factory.mktemp("grep-meta") / "data"
    return root, write_topic(root)


@pytest.fixture
def broker(topic, tmp_path) -> Path:
    """A log directory with partitions 0..3 of the six-partition topic."""
    root, _ = topic
    for p in range(HERE):
        shutil.copytree(root / f"{TOPIC}-{p}", tmp_path / "data" / f"{TOPIC}-{p}")
    return tmp_path / "data"


def _key(written: list[Written]) -> bytes:
    """A key in partitions 0..3 whose partition among four partitions is another one."""
    return next(
        w.key
        for w in written
        if w.key
        and w.key.startswith(b"order-")
        and w.partition < HERE
        and partition_for_key(w.key, HERE) != w.partition
    )


def _rows(text: str) -> list[tuple[int, int]]:
    return [(r["partitionId"], r["offset"]) for r in map(json.loads, text.splitlines()) if r["type"] == "record"]


def test_the_directories_alone_prune_to_the_wrong_partition(topic, broker) -> None:
    """The premise: partitions 0..3 look like a topic of four, and the key's record is missed."""
    _, written = topic
    key = _key(written)
    r = run_cli(["grep", "--key", key.decode(), str(broker)])
    assert r.exit_code == 1, r.errtext
    assert f"murmur2 of the key mod {HERE} partitions, the partitions found" in r.errtext


def test_the_metadata_in_the_log_directory_wins_and_the_disagreement_is_said(topic, broker) -> None:
    _, written = topic
    key = _key(written)
    _metadata(broker, PARTITIONS)
    r = run_cli(["grep", "--format", "json", "--key", key.decode(), str(broker)])
    assert r.exit_code == 0, r.errtext
    assert _rows(r.text) == [(w.partition, w.offset) for w in written if w.key == key]
    target = partition_for_key(key, PARTITIONS)
    meta = broker / "__cluster_metadata-0"
    assert f"kseg: note: {meta}: the topics' partition counts from the cluster metadata (as of offset " in r.errtext
    assert (
        f"{TOPIC}: the cluster metadata says {PARTITIONS} partitions, the directories here 0..{HERE - 1}: the "
        "metadata's count used" in r.errtext
    )
    assert (
        f"{TOPIC}: only partition {target} of the topic read, where Kafka's default partitioner sends this key "
        f"(murmur2 of the key mod {PARTITIONS} partitions, the cluster metadata's count" in r.errtext
    )


def test_metadata_given_with_partitions_added_later(topic, broker, tmp_path) -> None:
    """``--metadata`` names the log (the log directory holding it); two partitions added by a later batch
    are counted, as a producer's metadata counts them once the brokers have replayed it."""
    _, written = topic
    key = _key(written)
    _metadata(tmp_path / "meta", PARTITIONS, extra=2)
    r = run_cli(["grep", "--format", "json", "--key", key.decode(), "--metadata", str(tmp_path / "meta"), str(broker)])
    assert r.exit_code == 0, r.errtext
    assert _rows(r.text) == [(w.partition, w.offset) for w in written if w.key == key]
    assert f"mod {PARTITIONS} partitions, the cluster metadata's count" in r.errtext


def test_agreeing_counts_say_no_disagreement(topic, tmp_path) -> None:
    root, written = topic
    shutil.copytree(root, tmp_path / "data")
    _metadata(tmp_path / "data", PARTITIONS)
    key = b"order-123"
    r = run_cli(["grep", "--format", "json", "--key", "order-123", str(tmp_path / "data")])
    assert r.exit_code == 0, r.errtext
    assert _rows(r.text) == [(w.partition, w.offset) for w in written if w.key == key]
    assert "the cluster metadata says" not in r.errtext
    assert f"mod {PARTITIONS} partitions, the cluster metadata's count" in r.errtext


def test_a_replay_that_stops_short_is_not_used(topic, broker) -> None:
    """The batch adding partitions 4 and 5 damaged: the image would say four partitions; not used, said."""
    _, written = topic
    key = _key(written)
    meta = _metadata(broker, PARTITIONS, extra=2)
    log = sorted(meta.glob("*.log"))[0]
    with open(log, "r+b") as f:  # the last batch's last byte: its CRC fails
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0xFF]))
    r = run_cli(["grep", "--key", key.decode(), str(broker)])
    assert "the cluster metadata's replay stopped short" in r.errtext and "its partition counts not used" in r.errtext
    assert f"mod {HERE} partitions, the partitions found" in r.errtext
    assert r.exit_code == 1


def test_metadata_that_cannot_be_read(topic, broker, tmp_path) -> None:
    _, written = topic
    key = _key(written).decode()
    (tmp_path / "empty").mkdir()
    r = run_cli(["grep", "--key", key, "--metadata", str(tmp_path / "empty"), str(broker)])
    said = f"kseg: error: {tmp_path / 'empty'}: --metadata: nothing to read"
    assert r.exit_code == 2 and said in r.errtext, r.errtext
    assert "hint: give the __cluster_metadata-0 directory" in r.errtext and "Traceback" not in r.errtext


def test_metadata_that_is_a_fifo_names_the_option(topic, broker, tmp_path) -> None:
    _, written = topic
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = run_cli(["grep", "--key", _key(written).decode(), "--metadata", str(fifo), str(broker)])
    assert r.exit_code == 2 and f"kseg: error: {fifo}: --metadata: " in r.errtext, r.errtext
    assert "partition directories" not in r.errtext and "Traceback" not in r.errtext


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--metadata", "m", "--value-regex", "x"], "are for --key"),
        (["--metadata", "m", "--partitions", "3", "--key", "k"], "give --partitions or --metadata, not both"),
        (["--metadata", "m", "--no-prune", "--key", "k"], "--no-prune reads every partition"),
    ],
)
def test_usage_errors(topic, args: list[str], said: str) -> None:
    root, _ = topic
    r = run_cli(["grep", *args, str(root)])
    assert r.exit_code == 2 and said in r.errtext, r.errtext
