"""``kseg metadata`` on damaged and unusual input: a batch failing its CRC stops the replay there (the
image as of the batch before, shown as partial, exit 1), a record that is not a metadata record halts it,
a snapshot cut short is no starting point; the Kafka corpus's ``__cluster_metadata-0`` directories (written
by Kafka's own classes) give the images worked out by hand from their records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kseg.storage.records import FileRecords
from tests.conftest import CORPUS_DATA, run_cli
from tests.ops.metadata import scenario as sc
from tests.ops.metadata.build import Log, record
from tests.stores import local

KAFKA4X = Path(__file__).resolve().parents[2] / "data" / "kafka4x" / "data" / "__cluster_metadata-0"


def _position(lg: Log, offset: int) -> int:
    """The byte position of the batch at ``offset`` in the first segment."""
    return sum(len(raw) for base, raw in lg.batches if base < offset)


def test_a_batch_failing_its_crc_stops_the_replay(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    lg = sc.log()
    at = _position(lg, 9)  # the batch of offsets 9-13 (topic orders)
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[at + 70] ^= 0x01  # a byte of its first record
    log.write_bytes(bytes(data))
    r = run_cli(["metadata", str(part)])
    assert r.exit_code == 1
    head = r.text.splitlines()[0]
    assert head.startswith("Partial image, as of offset 8 (not read past byte")
    assert "Cluster metadata as of" not in r.text
    assert f"{log}: at byte {at}: batch at offset 9: CRC mismatch (stored " in r.errtext
    row = json.loads(run_cli(["metadata", "--format", "json", str(part)]).text)
    assert row["complete"] is False and row["offset"] == 8 and row["topics"] == []
    assert row["stoppedAt"]["position"] == at and row["stoppedAt"]["stop"] == "corrupt"
    assert row["stoppedAt"]["bytesRead"] == at


def test_a_record_that_is_not_a_metadata_record_halts_it(tmp_path: Path) -> None:
    lg = Log()
    lg.batch(record("FeatureLevelRecord", name="metadata.version", featureLevel=21))
    lg.batch(record("TopicRecord", name="t", topicId=sc.uuid(1)), b"\x01\x7f\x00")  # api key 127: no such record
    lg.batch(record("FeatureLevelRecord", name="group.version", featureLevel=1))
    part = lg.write(tmp_path / "__cluster_metadata-0")
    r = run_cli(["metadata", "--format", "json", str(part)])
    assert r.exit_code == 1
    row = json.loads(r.text)
    assert row["offset"] == 0 and row["topics"] == [] and row["features"] == {"metadata.version": 21}
    assert row["halted"]["offset"] == 2 and row["complete"] is False and row["stoppedAt"] is None
    assert "the record at offset 2 is not a metadata record" in r.errtext
    assert "Unknown metadata id 127" in r.errtext


def test_a_snapshot_without_its_footer(tmp_path: Path) -> None:
    part = sc.write(tmp_path, snapshot=True)
    snap = next(part.glob("*.checkpoint"))
    data = snap.read_bytes()
    with FileRecords(str(snap), store=local()) as records:
        ends = [b.position + b.size for b in records.batches()]
    snap.write_bytes(data[: ends[-2]])  # header and records, no footer: the writer never finished
    r = run_cli(["metadata", "--format", "json", str(part)])
    assert r.exit_code == 1
    row = json.loads(r.text)
    assert row["complete"] is False and row["offset"] == -1
    assert "no snapshot footer" in row["stoppedAt"]["reason"]


def test_records_kafka_refuses_are_listed_not_applied(tmp_path: Path) -> None:
    lg = Log()
    lg.batch(
        record("UnfenceBrokerRecord", id=4, epoch=1),
        record("RemoveTopicRecord", topicId=sc.uuid(9)),
        record("PartitionChangeRecord", partitionId=0, topicId=sc.uuid(9), isr=[1]),
        record("RemoveAccessControlEntryRecord", id=sc.uuid(5)),
        record("BeginTransactionRecord", name="a"),
    )
    lg.batch(record("BeginTransactionRecord", name="b"), record("EndTransactionRecord"))
    lg.batch(record("EndTransactionRecord"))
    part = lg.write(tmp_path / "__cluster_metadata-0")
    r = run_cli(["metadata", "--format", "json", str(part)])
    assert r.exit_code == 1
    problems = [(p["offset"], p["message"]) for p in json.loads(r.text)["problems"]]
    topic = sc.b64(sc.uuid(9))
    assert problems == [
        (0, "Tried to unfence broker 4, but that broker was not registered."),
        (1, f"Unable to delete topic with id {topic}: no such topic found."),
        (2, f"Unable to find partition {topic}:0"),
        (3, f"Failed to find existing ACL with ID {sc.b64(sc.uuid(5))} in either image or changes"),
        (5, "Encountered BeginTransactionRecord while already in a transaction"),
        (7, "Encountered EndTransactionRecord without having seen a BeginTransactionRecord"),
    ]
    text = run_cli(["metadata", str(part)]).text
    assert "Records Kafka's loader would refuse (6): not applied" in text


def test_the_kafka_corpus() -> None:
    """tests/data/corpus (Kafka's classes, 2024): metadata.version 21, broker 1 registered fenced at offset 4 and
    unfenced at 8, topic orders with one partition and a config, producer ids from 1000; offsets 0-2 are
    KRaftVersion (1), KRaftVoters and LeaderChange control batches."""
    r = run_cli(["metadata", "--format", "json", str(CORPUS_DATA / "__cluster_metadata-0")])
    assert r.exit_code == 0, r.errtext
    row = json.loads(r.text)
    assert (row["offset"], row["epoch"], row["time"], row["kraftVersion"]) == (12, 1, 1730000003010, 1)
    assert row["features"] == {"metadata.version": 21}
    assert row["brokers"] == [
        {
            "id": 1,
            "epoch": 7,
            "incarnationId": "qS7Q5Mg9Tpue8lMzUNBN3g",
            "rack": None,
            "fenced": False,
            "inControlledShutdown": False,
            "endpoints": [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": "PLAINTEXT"}],
            "directories": [],
            "cordonedDirectories": None,
            "supportedFeatures": {},
        }
    ]
    assert row["topics"] == [
        {
            "name": "orders",
            "id": "ZQmzJEk4QJ2nrjTvrsAu0w",
            "partitions": [
                {
                    "partition": 0,
                    "replicas": [1],
                    "isr": [1],
                    "leader": 1,
                    "leaderEpoch": 0,
                    "partitionEpoch": 0,
                    "removingReplicas": [],
                    "addingReplicas": [],
                    "elr": [],
                    "lastKnownElr": [],
                    "directories": ["AAAAAAAAAAAAAAAAAAAAAA"],
                    "leaderRecoveryState": "RECOVERED",
                }
            ],
        }
    ]
    assert row["configs"] == [
        {"resourceType": "TOPIC", "resourceName": "orders", "configs": {"cleanup.policy": "compact"}}
    ]
    assert row["producerIds"] == {"nextProducerId": 1000}
    assert row["controllers"] == row["acls"] == row["clientQuotas"] == row["scramUsers"] == []
    assert row["problems"] == [] and row["complete"] is True
    # at the LeaderChange control batch: nothing but the control records' kraft.version
    early = json.loads(run_cli(["metadata", "--format", "json", "--at-offset", "2", str(CORPUS_DATA)]).text)
    assert (early["offset"], early["features"], early["brokers"], early["kraftVersion"]) == (2, {}, [], 1)
    fenced = json.loads(run_cli(["metadata", "--format", "json", "--at-offset", "7", str(CORPUS_DATA)]).text)
    assert fenced["brokers"][0]["fenced"] is True and fenced["topics"][0]["name"] == "orders"


def test_the_kafka_4x_records(tmp_path: Path) -> None:
    """tests/data/kafka4x (Kafka 4.4's classes): ClearElrRecord for a topic the image lacks (Kafka's
    "no such topic found"), UnregisterControllerRecord of an unknown controller (nothing to remove),
    RegisterBrokerRecord v4 with a cordoned log dir and BrokerRegistrationChangeRecord v3 uncordoning it."""
    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(KAFKA4X, part)
    r = run_cli(["metadata", "--format", "json", str(part)])
    assert r.exit_code == 1
    row = json.loads(r.text)
    assert row["problems"] == [
        {
            "offset": 1,
            "record": "ClearElrRecord",
            "message": "Unable to clear elr for topic with name t: no such topic found.",
        }
    ]
    (broker,) = row["brokers"]
    assert broker["directories"] == ["ERITFBUWFxgZGhscHR4fIA"]
    assert broker["cordonedDirectories"] == []  # v3's CordonedLogDirs [] replaces v4's list
    assert broker["fenced"] is True and broker["incarnationId"] == "AQIDBAUGBwgJCgsMDQ4PEA"
    at3 = json.loads(run_cli(["metadata", "--format", "json", "--at-offset", "3", str(part)]).text)
    assert at3["brokers"][0]["cordonedDirectories"] == ["ERITFBUWFxgZGhscHR4fIA"]
    assert (row["offset"], row["time"], row["kraftVersion"]) == (4, 1780000000001, None)


def test_text_fits_80_columns(tmp_path: Path) -> None:
    part = sc.write(tmp_path, snapshot=True)
    for args in ([], ["--at-offset", "20"], ["--topic", "orders", "--at-offset", "20"], ["--broker", "2"]):
        text = run_cli(["metadata", *args, str(part)]).text
        assert all(len(line) <= 80 for line in text.splitlines()), text
    text = run_cli(["metadata", "--topic", "orders", "--at-offset", "20", str(part)]).text
    assert "Topics (1)" in text and "retention.ms=1000" in text and "Brokers" not in text
    assert "1: leader 1 (epoch 1)  replicas 2,1  isr 1  partition epoch 1  elr 2" in text


def test_filters_in_json(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    row = json.loads(run_cli(["metadata", "--format", "json", "--at-offset", "28", "--broker", "1", str(part)]).text)
    assert [b["id"] for b in row["brokers"]] == [1]
    assert [(t["name"], [p["partition"] for p in t["partitions"]]) for t in row["topics"]] == [
        ("committed", []),
        ("orders", [0, 1]),
    ]
    row = json.loads(run_cli(["metadata", "--format", "json", "--topic", "committed", str(part)]).text)
    assert [t["name"] for t in row["topics"]] == ["committed"] and row["configs"] == []


def test_usage_errors(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    for args, said in (
        (["--from-start", "--snapshot-only"], "cannot go with --snapshot-only"),
        (["--at-offset", "1", "--at-time", "1"], "not both"),
        (["--at-time", "yesterday"], "--at-time"),
        (["--snapshot-only"], "no snapshot in"),
    ):
        r = run_cli(["metadata", *args, str(part)])
        assert r.exit_code == 2 and r.text == "", (args, r.text)
        assert said in r.errtext and "Traceback" not in r.errtext, r.errtext
    r = run_cli(["metadata", str(CORPUS_DATA)])  # every partition of the corpus, one metadata directory
    assert r.exit_code == 0


def test_on_an_object_store(s3, tmp_path: Path) -> None:
    """The same image from S3 (moto's server on loopback) as from the disk, the snapshot found by listing."""
    part = sc.write(tmp_path / "meta", snapshot=True)
    s3.upload_tree(tmp_path / "meta", "metadata-test/meta")
    here = json.loads(run_cli(["metadata", "--format", "json", str(part)]).text)
    r = run_cli(["metadata", "--format", "json", s3.uri("metadata-test/meta")])
    assert r.exit_code == 1, r.errtext  # the scenario's refused FenceBrokerRecord
    remote = json.loads(r.text)
    assert remote["snapshot"] == s3.uri(
        "metadata-test/meta/__cluster_metadata-0/00000000000000000021-0000000001.checkpoint"
    )
    for row in (here, remote):
        del row["directory"], row["snapshot"]
    assert remote == here


def test_a_gap_after_the_snapshot_halts(tmp_path: Path) -> None:
    """The snapshot ends at offset 20 but the log starts at 25: offsets 21-24 are in no batch."""
    part = sc.write(tmp_path, snapshot=True, log_from=25)
    r = run_cli(["metadata", "--format", "json", str(part)])
    assert r.exit_code == 1
    row = json.loads(r.text)
    assert row["offset"] == 20 and row["complete"] is False
    assert row["halted"]["offset"] == 21 and "offsets 21 to 24 are in no batch" in row["halted"]["reason"]
