"""Real ``--format json`` and ``--report`` rows of every command, for the JSON Schema test
(tests/cli/test_json_schema.py) and for regenerating docs/kseg.schema.json (``python -m tests.json_rows``)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from kseg.jsonlines import SCHEMA_VERSION
from tests.conftest import CORPUS_DATA, run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _rows(args: list[str], cwd=None) -> list[dict]:
    r = run_cli(args, cwd=cwd)
    assert r.exit_code in (0, 1), (args, r.exit_code, r.errtext)
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


def every_command_rows() -> Iterator[tuple[str, dict]]:
    """(command, row) for every JSON row kind each command writes on the corpus."""
    parts = sorted(p for p in CORPUS_DATA.iterdir() if p.is_dir())
    logs = sorted(str(p) for p in CORPUS_DATA.glob("*/*.log"))
    others = sorted(
        str(p) for ext in ("index", "timeindex", "txnindex", "snapshot") for p in CORPUS_DATA.glob(f"*/*.{ext}")
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "notes.txt").write_text("not a segment")
        (tmp / "empty.index").write_bytes(b"")
        runs = [
            ["dump", "--format", "json", "--print-data-log", *logs],
            ["dump", "--format", "json", "--deep-iteration", *others, str(tmp / "notes.txt")],
            ["dump", "--format", "json", "--verify-index-only", *others],
            ["dump", "--format", "json", "--index-sanity-check", *others],
            [
                "dump",
                "--format",
                "json",
                "--offsets-decoder",
                *map(str, (CORPUS_DATA / "__consumer_offsets-0").glob("*.log")),
            ],
            [
                "dump",
                "--format",
                "json",
                "--cluster-metadata-decoder",
                *map(str, (CORPUS_DATA / "__cluster_metadata-0").glob("*")),
            ],
        ]
        for args in runs:
            for row in _rows(args):
                yield "dump", row
        report = tmp / "report.jsonl"
        for row in _rows(["verify-index", "-q", "--format", "json", "--report", str(report), str(CORPUS_DATA)]):
            yield "verify-index", row
        for line in report.read_text().splitlines():
            yield "verify-index", json.loads(line)
        for target in ("0", "110", "419", "420", "-5"):
            for row in _rows(["lookup-offset", "--format", "json", target, "plain-v2-0"], cwd=CORPUS_DATA):
                yield "lookup-offset", row
        for target in ("earliest", "latest", "max-timestamp", "1730000000050", "9999999999999"):
            for row in _rows(["lookup-time", "--format", "json", target, "plain-v2-0"], cwd=CORPUS_DATA):
                yield "lookup-time", row
        for row in _rows(["rebuild-index", "-q", "--check", "--format", "json", "."], cwd=CORPUS_DATA):
            yield "rebuild-index", row
        out = tmp / "rebuilt"
        for row in _rows(
            ["rebuild-index", "-q", "--format", "json", "--output-dir", str(out), "txn-v2-0"], cwd=CORPUS_DATA
        ):
            yield "rebuild-index", row
        for row in _rows(["txn", "-q", "--from-start", "--format", "json", str(CORPUS_DATA)]):
            yield "txn", row
        for row in _rows(["compaction", "-q", "--at", "1730000000000", "--format", "json", str(CORPUS_DATA)]):
            yield "compaction", row
        report = tmp / "export-report.json"
        parquet = str(tmp / "x.parquet")
        r = run_cli(["export", "-q", str(CORPUS_DATA / "plain-v2-0"), "-o", parquet, "--report", str(report)])
        assert r.exit_code == 0, r.errtext
        yield "export", json.loads(report.read_text())
        yield from _grep_rows(tmp)
        yield from _salvage_rows(tmp)
        yield from _broker_rows(tmp)
    del parts


def _grep_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """``kseg grep``'s rows: records of every magic (data and control), what was not read (a CRC mismatch,
    a partial batch, records that do not decode), counts, the summary; a directory not named <topic>-<n>."""
    loose = tmp / "loose"  # no topic, no partition number: null
    shutil.copytree(CORPUS_DATA / "plain-v2-0", loose)
    shutil.copytree(CORPUS_DATA / "corrupt-crc-0", tmp / "damaged")
    damaged = [str(CORPUS_DATA / name) for name in ("corrupt-crc-0", "corrupt-truncated-0", "corrupt-compressed-0")]
    runs = [
        ["--from-offset", "0", str(CORPUS_DATA / "plain-v2-0"), str(CORPUS_DATA / "v1-gzip-0"), *damaged],
        ["--control", str(CORPUS_DATA / "txn-v2-0")],
        ["--count", "--from-offset", "0", str(CORPUS_DATA / "plain-v2-0"), str(loose)],
        ["--limit", "2", "--from-offset", "0", str(loose)],
        ["--from-offset", "0", str(tmp / "damaged")],
    ]
    for args in runs:
        for row in _rows(["grep", "-q", "--format", "json", *args]):
            yield "grep", row


def _salvage_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """``kseg salvage`` of txn-v2-0 with its first commit marker zeroed and a batch found twice: segment,
    loss (damaged, duplicate), transaction and summary rows."""
    part = tmp / "damaged" / "txn-v2-0"
    shutil.copytree(CORPUS_DATA / "txn-v2-0", part)
    log = part / "00000000000000000000.log"
    data, pos, marker = log.read_bytes(), 0, None
    while marker is None:
        size = 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        if data[pos + 22] & 0x20:  # attributes' control bit: the first marker
            marker = (pos, size)
        pos += size
    p, n = marker
    first = 12 + int.from_bytes(data[8:12], "big")
    log.write_bytes(data[:first] + data[:first] + data[first:p] + bytes(n) + data[p + n :])
    for row in _rows(["salvage", "--format", "json", str(part), "-o", str(tmp / "salvaged" / "txn-v2-0")]):
        yield "salvage", row


def _broker_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """The rows of the commands that compare brokers or read a broker's own files: diff, coordinator, logdir."""
    b1, b2 = tmp / "b1" / "plain-v2-0", tmp / "b2" / "plain-v2-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", b1)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", b2)
    (b2 / "00000000000000000251.log").unlink()  # a lagging replica
    for row in _rows(["diff", "--format", "json", str(b1), str(b2)]):
        yield "diff", row
    for row in _rows(["coordinator", "--format", "json", "--group", "g", "--transactional-id", "t"]):
        yield "coordinator", row
    from tests.ops.logdir.kafka_dir import log_dir

    kafka = log_dir(tmp / "kafka")  # every file a 3.7+ broker keeps; tmp/b1: none of them (null values)
    (kafka / "new-0").mkdir()  # a partition directory holding no segment yet: no log end, no timestamps
    for row in _rows(["logdir", "--format", "json", str(kafka), str(tmp / "b1")]):
        yield "logdir", row
    yield from _tiered_rows(tmp / "tiered")
    yield from _metadata_rows(tmp / "metadata")


def _metadata_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """``kseg metadata`` on the constructed cluster (tests/ops/metadata/scenario.py): from a snapshot, inside
    an open transaction, at the start (nothing applied), and stopped at a batch that fails its CRC."""
    from tests.ops.metadata import scenario as sc
    from tests.ops.metadata.build import Log

    part = sc.write(tmp, snapshot=True)
    for args in (
        [],
        ["--from-start", "--at-offset", "22"],
        ["--from-start", "--at-offset", "0"],
        ["--from-start", "--history", "orders-1"],  # created, changed, removed: change rows, then history
    ):
        for row in _rows(["metadata", "--format", "json", *args, str(part)]):
            yield "metadata", row
    for row in _rows(["metadata", "--format", "json", "--diff", "--at-offset", "20", "--at-offset", "39", str(part)]):
        yield "metadata", row  # difference rows (created, deleted, changed), then diff
    log = part / "00000000000000000021.log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF  # the last batch's last record: its CRC fails
    log.write_bytes(bytes(data))
    for row in _rows(["metadata", "--format", "json", str(part)]):
        yield "metadata", row
    bad = Log()
    bad.batch(b"not a metadata record")  # halts the replay: nothing applied from it on
    for row in _rows(["metadata", "--format", "json", str(bad.write(tmp / "junk" / "__cluster_metadata-0"))]):
        yield "metadata", row
    yield from _metadata_disk_rows(tmp / "disks")


def _metadata_disk_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """``kseg metadata --logdir``: a disagreement row of every cause, then the disks row."""
    from tests.ops.metadata import test_disks as td

    meta = td.cluster(tmp)
    dirs = [
        td.log_dir(tmp / "b1" / "d1a", 1, td.D1A, {"orders-0": td.ORDERS, "old-0": td.OLD, "nometa-0": None}),
        td.log_dir(tmp / "b1" / "d1b", 1, td.D1B, {"orders-1": td.ORDERS}),
        td.log_dir(tmp / "b2" / "d2", 2, td.D2, {"orders-0": td.RECREATED, "payments-0": td.PAYMENTS}),
    ]
    (dirs[2] / "payments-0" / "partition.metadata").write_text("version: 0\n")  # not compared
    args = [a for d in dirs for a in ("--logdir", str(d))]
    for row in _rows(["metadata", "--format", "json", str(meta), *args]):
        yield "metadata", row


def _tiered_rows(tmp: Path) -> Iterator[tuple[str, dict]]:
    """``kseg tiered`` on a constructed cluster (tests/ops/tiered/scenario.py) with every kind of row: orphans
    of a copy never finished and of a partition no metadata names, a segment with Aiven's custom metadata;
    then without the store and the log directory, the partition marked for deletion (the nulls)."""
    from kseg.storage.remote_keys import object_key
    from kseg.testing import remote_metadata as rm
    from tests.ops.tiered import scenario as sc

    cluster = sc.healthy()
    custom = rm.aiven_custom_metadata(remote_size=sc.OBJECT_BYTES)  # its objects: right
    cluster.values += [
        rm.segment_update(sc.seg("a"), rm.COPY_SEGMENT_FINISHED, custom=custom),
        rm.segment_metadata(sc.seg("new"), 400, 499, size=sc.SIZE),
    ]
    cluster.stored["new"], cluster.local_start = 400, 500
    meta, store, logdir = cluster.write(tmp / "one")
    stray = store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 1, 0, sc.IDS["stray"], "log")
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"x")
    partitions = ["--metadata-partitions", str(sc.PARTITIONS)]
    for row in _rows(
        ["tiered", "--format", "json", *partitions, str(meta), "--remote", str(store), "--logdir", str(logdir)]
    ):
        yield "tiered", row
    cluster.values.append(rm.partition_delete(sc.TOPIC_ID, sc.TOPIC, sc.PARTITION, rm.DELETE_PARTITION_MARKED))
    meta, _, _ = cluster.write(tmp / "two")
    for row in _rows(["tiered", "--format", "json", *partitions, str(meta)]):
        yield "tiered", row


def _types(value) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }[type(value)]


# Fields documented as "or null" that the corpus happens to show set.
NULLABLE = {
    "position",
    "entry",
    "segment",
    "error",
    "hint",
    "expected",
    "found",
    "deleteHorizonMs",
    "snapshot",
    "failure",
    "stop",
    "command",
    "reason",
    "offset",
    "count",
    "markerOffset",
    "coordinatorEpoch",
    "markerTimestamp",
    "currentTxnFirstOffset",
    "lsoHeldBy",
    "batch",
    "record",
    "stopped",
}

# Fields whose shape the rows seen do not show whole (stated here, documented in json-output.md).
FIXED = {
    "consequences": {"type": ["integer", "null"], "minimum": 1},
    "headers": {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["key", "value"],
            "additionalProperties": False,
            "properties": {"key": {"type": "string"}, "value": {"type": ["string", "null"]}, "base64": {"const": True}},
        },
    },
}


# Row kinds the corpus does not produce (a KRaft .checkpoint, a directory that cannot be listed).
def _unseen(kind: str, required: list[str], **properties: dict) -> dict:
    """The schema of a row of type ``kind``: ``type`` and ``v`` and then ``properties``, of which
    ``required`` are."""
    return {
        "type": "object",
        "required": ["type", "v", *required],
        "properties": {"type": {"const": kind}, "v": {"const": SCHEMA_VERSION}, **properties},
    }


_STRING, _INTEGER = {"type": "string"}, {"type": "integer"}
UNSEEN = {
    "dump.kraft_snapshot": _unseen(
        "kraft_snapshot",
        ["file", "bootstrap"],
        file=_STRING,
        bootstrap={"type": "boolean"},
        endOffset=_INTEGER,
        epoch=_INTEGER,
    ),
    "rebuild-index.unreadable": _unseen(
        "unreadable",
        ["logDir", "partition", "path", "error"],
        logDir=_STRING,
        partition=_STRING,
        path=_STRING,
        error=_STRING,
    ),
}


# The registry decoder's fields on dump's record rows (docs/schemas.md); its rows need the [schemas] extra,
# so they are stated here and checked by tests/registry.
_SCHEMA_REF = {
    "type": "object",
    "required": ["id", "subject", "version", "type"],
    "properties": {
        "id": _INTEGER,
        "subject": _STRING,
        "version": _INTEGER,
        "type": {"enum": ["AVRO", "PROTOBUF", "JSON"]},
        "deleted": {"const": True},
        "message": _STRING,
        "framing": {"enum": ["apicurio", "apicurio-content", "apicurio4", "apicurio4-content"]},
    },
}
_DECODED = {
    "key": {},  # the decoded value (any JSON) with the registry decoder; else a string or a topic decoder's object
    "payload": {},
    "keySchema": _SCHEMA_REF,
    "payloadSchema": _SCHEMA_REF,
    "keyDecodeError": _STRING,
    "payloadDecodeError": _STRING,
    "keyInvalid": _STRING,
    "payloadInvalid": _STRING,
}


def _obj(required: str, **more: dict) -> dict:
    """An object whose fields named in ``required`` (space-separated) are required, typed by ``more``."""
    return {"type": "object", "required": required.split(), "properties": more}


def _array(items: dict) -> dict:
    return {"type": "array", "items": items}


_BOOL, _OPT_STRING, _INTS = {"type": "boolean"}, {"type": ["string", "null"]}, _array(_INTEGER)
_ENDPOINT = _obj("name host port securityProtocol", name=_STRING, host=_STRING, port=_INTEGER, securityProtocol=_STRING)
_SUPPORTED = {"type": "object", "additionalProperties": _obj("min max", min=_INTEGER, max=_INTEGER)}
_READ = _obj(
    "path bytesPresent bytesRead stop position reason",
    path=_STRING,
    bytesPresent=_INTEGER,
    bytesRead=_INTEGER,
    stop=_STRING,
    position={"type": ["integer", "null"]},
    reason=_OPT_STRING,
)
# kseg metadata's one row, whole (docs/metadata.md): nested objects the generated schema would leave open
METADATA_IMAGE = {
    "offset": _INTEGER,
    "epoch": _INTEGER,
    "time": _INTEGER,
    "complete": _BOOL,
    "stoppedAt": {"anyOf": [{"type": "null"}, _READ]},
    "halted": {
        "anyOf": [
            {"type": "null"},
            _obj("offset path position reason", offset=_INTEGER, path=_STRING, position=_INTEGER, reason=_STRING),
        ]
    },
    "snapshot": _OPT_STRING,
    "kraftVersion": {"type": ["integer", "null"]},
    "openTransaction": {"type": ["integer", "null"]},
    "features": {"type": "object", "additionalProperties": _INTEGER},
    "brokers": _array(
        _obj(
            "id epoch incarnationId rack fenced inControlledShutdown endpoints directories cordonedDirectories "
            "supportedFeatures",
            id=_INTEGER,
            epoch=_INTEGER,
            incarnationId=_STRING,
            rack=_OPT_STRING,
            fenced=_BOOL,
            inControlledShutdown=_BOOL,
            endpoints=_array(_ENDPOINT),
            directories=_array(_STRING),
            cordonedDirectories={"anyOf": [{"type": "null"}, _array(_STRING)]},
            supportedFeatures=_SUPPORTED,
        )
    ),
    "controllers": _array(
        _obj(
            "id incarnationId endpoints zkMigrationReady supportedFeatures",
            id=_INTEGER,
            incarnationId=_STRING,
            endpoints=_array(_ENDPOINT),
            zkMigrationReady=_BOOL,
            supportedFeatures=_SUPPORTED,
        )
    ),
    "topics": _array(
        _obj(
            "name id partitions",
            name=_STRING,
            id=_STRING,
            partitions=_array(
                _obj(
                    "partition replicas isr leader leaderEpoch partitionEpoch removingReplicas addingReplicas elr "
                    "lastKnownElr directories leaderRecoveryState",
                    partition=_INTEGER,
                    replicas=_INTS,
                    isr=_INTS,
                    leader=_INTEGER,
                    leaderEpoch=_INTEGER,
                    partitionEpoch=_INTEGER,
                    removingReplicas=_INTS,
                    addingReplicas=_INTS,
                    elr=_INTS,
                    lastKnownElr=_INTS,
                    directories=_array(_STRING),
                    leaderRecoveryState=_STRING,
                )
            ),
        )
    ),
    "configs": _array(
        _obj(
            "resourceType resourceName configs",
            resourceType=_STRING,
            resourceName=_STRING,
            configs={"type": "object", "additionalProperties": _OPT_STRING},  # null: a sensitive value, not shown
        )
    ),
    "producerIds": _obj("nextProducerId", nextProducerId=_INTEGER),
    "acls": _array(
        _obj(
            "id resourceType resourceName patternType principal host operation permissionType",
            id=_STRING,
            resourceType=_STRING,
            resourceName=_STRING,
            patternType=_STRING,
            principal=_STRING,
            host=_STRING,
            operation=_STRING,
            permissionType=_STRING,
        )
    ),
    "clientQuotas": _array(
        _obj(
            "entity quotas",
            entity={"type": "object", "additionalProperties": _OPT_STRING},
            quotas={"type": "object", "additionalProperties": {"type": "number"}},
        )
    ),
    "scramUsers": _array(_obj("name mechanism iterations", name=_STRING, mechanism=_STRING, iterations=_INTEGER)),
    "delegationTokens": _array(
        _obj(
            "tokenId owner requester renewers issueTimestamp maxTimestamp expiryTimestamp",
            tokenId=_STRING,
            owner=_STRING,
            requester=_STRING,
            renewers=_array(_STRING),
            issueTimestamp=_INTEGER,
            maxTimestamp=_INTEGER,
            expiryTimestamp=_INTEGER,
        )
    ),
    "problems": _array(_obj("offset record message", offset=_INTEGER, record=_STRING, message=_STRING)),
}
_PARTITION = METADATA_IMAGE["topics"]["items"]["properties"]["partitions"]["items"]
METADATA_CHANGE = {
    "records": _array(_obj("offset record", offset={"type": ["integer", "null"]}, record=_STRING)),
    "before": {"anyOf": [{"type": "null"}, _PARTITION]},
    "after": {"anyOf": [{"type": "null"}, _PARTITION]},
}
METADATA_HISTORY = {k: METADATA_IMAGE[k] for k in ("snapshot", "stoppedAt", "halted")}
_SIDE = _obj("directory offset time complete", directory=_STRING, offset=_INTEGER, time=_INTEGER, complete=_BOOL)
METADATA_DIFF = {"left": _SIDE, "right": _SIDE}
METADATA_DIFFERENCE = {"kind": {"enum": ["created", "deleted", "changed"]}, "before": {}, "after": {}}
_OPT_INT = {"type": ["integer", "null"]}
METADATA_DISAGREEMENT = {
    "cause": {"enum": ["stray", "topicId", "missing", "directory", "uncompared"]},
    "node": _OPT_INT,
    "topic": _OPT_STRING,
    "partition": _OPT_STRING,
    "partitionId": _OPT_INT,
    "logDir": _OPT_STRING,
    "path": _OPT_STRING,
    "topicId": _OPT_STRING,
    "imageTopicId": _OPT_STRING,
    "replicas": {"anyOf": [{"type": "null"}, _INTS]},
    "directory": _OPT_STRING,
    "imageDirectory": _OPT_STRING,
    "reason": _STRING,
}
METADATA_DISKS = {
    "logDirs": _array(
        _obj(
            "path node directoryId partitions",
            path=_STRING,
            node=_OPT_INT,
            directoryId=_OPT_STRING,
            partitions=_INTEGER,
        )
    ),
    "compared": _INTEGER,
    "disagreements": {"type": "object", "additionalProperties": _INTEGER},
}
ADDED = {
    "metadata.image": METADATA_IMAGE,
    "metadata.change": METADATA_CHANGE,
    "metadata.history": METADATA_HISTORY,
    "metadata.diff": METADATA_DIFF,
    "metadata.difference": METADATA_DIFFERENCE,
    "metadata.disagreement": METADATA_DISAGREEMENT,
    "metadata.disks": METADATA_DISKS,
    "dump.record": _DECODED,
    "grep.record": _DECODED,
}


def generate() -> dict:
    """The schema, from rows seen: per (command, type), the fields always present are required; a field's
    types are those seen (null included where a row had null)."""
    kinds: dict[str, list[dict]] = {}
    for command, row in every_command_rows():
        kinds.setdefault(f"{command}.{row['type']}", []).append(row)
    defs = {}
    for name, rows in sorted(kinds.items()):
        fields: dict[str, set] = {}
        for row in rows:
            for k, v in row.items():
                fields.setdefault(k, set()).add(_types(v))
        required = [k for k in rows[0] if all(k in r for r in rows)]
        props = {}
        for k, ts in fields.items():
            if k == "type":
                props[k] = {"const": rows[0]["type"]}
            elif k == "v":
                props[k] = {"const": SCHEMA_VERSION}
            elif ts == {"null"}:  # only null in the corpus: any value (documented in json-output.md)
                props[k] = {}
            else:
                if k in NULLABLE:
                    ts = ts | {"null"}
                ts = sorted(ts - {"integer"} if "number" in ts else ts)
                props[k] = {"type": ts[0] if len(ts) == 1 else ts}
        props.update({k: FIXED[k] for k in props if k in FIXED})
        defs[name] = {"type": "object", "required": required, "properties": props}
    for name, extra in ADDED.items():
        defs[name]["properties"].update(extra)
    defs.update(UNSEEN)
    defs = dict(sorted(defs.items()))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/kseg/kseg/docs/kseg.schema.json",
        "title": f"kseg JSON Lines rows, schema version {SCHEMA_VERSION}",
        "description": (
            "One JSON object per line from every kseg command's --format json and verify-index "
            f"--report. Each row has type and v (the schema version, {SCHEMA_VERSION}). $defs are named "
            "<command>.<type>. Fields may be added within a version, never renamed or removed. "
            "See docs/json-output.md."
        ),
        "type": "object",
        "required": ["type", "v"],
        "properties": {"type": {"type": "string"}, "v": {"const": SCHEMA_VERSION}},
        "anyOf": [{"$ref": f"#/$defs/{name}"} for name in defs],
        "$defs": defs,
    }


if __name__ == "__main__":
    text = json.dumps(generate(), indent=1) + "\n"
    root = Path(__file__).resolve().parents[1]
    for target in (root / "kseg" / "kseg.schema.json", root / "docs" / "kseg.schema.json"):
        target.write_text(text)
    print(f"{len(json.loads(text)['$defs'])} row kinds", file=sys.stderr)
