"""``kseg metadata`` against images Kafka 4.4's own ``MetadataBatchLoader``/``MetadataDelta``/
``MetadataImage`` computed from the same ``__cluster_metadata-0`` directories (tests/data/metadata/
MANIFEST.md): every case of ``tests/data/metadata/CASES`` -- the end of each log, offsets inside
batches, inside and after metadata transactions, at control records, the snapshot alone, snapshot plus
log, and the whole log -- must give Kafka's image, section by section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.ops.metadata import scenario as sc

DATA = Path(__file__).resolve().parents[2] / "data" / "metadata"
MODES = {"default": [], "snapshot-only": ["--snapshot-only"], "from-start": ["--from-start"]}


def cases() -> list[tuple[str, str, str, str | None]]:
    rows = []
    for line in (DATA / "CASES").read_text().splitlines():
        name, directory, mode, *at = line.split()
        rows.append((name, directory, mode, at[0] if at else None))
    return rows


def canonical(row: dict) -> dict:
    """The sections both sides hold, lists in one order (Kafka keeps listeners in a ``HashMap``)."""
    out = {k: row[k] for k in ("offset", "epoch", "time", "features", "controllers", "producerIds")}
    out["brokers"] = row["brokers"]
    for node in out["brokers"] + out["controllers"]:
        node["endpoints"] = sorted(node["endpoints"], key=lambda e: e["name"])
    out["topics"] = sorted(row["topics"], key=lambda t: t["name"])
    out["configs"] = sorted(row["configs"], key=lambda c: (c["resourceType"], c["resourceName"]))
    out["acls"] = sorted(row["acls"], key=lambda a: a["id"])
    out["clientQuotas"] = sorted(row["clientQuotas"], key=lambda q: json.dumps(q, sort_keys=True))
    out["scramUsers"] = sorted(row["scramUsers"], key=lambda s: (s["name"], s["mechanism"]))
    out["delegationTokens"] = sorted(row["delegationTokens"], key=lambda d: d["tokenId"])
    return out


@pytest.mark.parametrize(("name", "directory", "mode", "at"), cases(), ids=[c[0] for c in cases()])
def test_image_is_kafkas(name: str, directory: str, mode: str, at: str | None) -> None:
    golden = json.loads((DATA / "golden" / f"{name}.json").read_text())
    args = ["metadata", "--format", "json", *MODES[mode]]
    if at is not None:
        args += ["--at-offset", at]
    r = run_cli([*args, str(DATA / directory / "__cluster_metadata-0")])
    assert r.exit_code == (1 if golden["problems"] else 0), (r.exit_code, r.errtext)
    (line,) = r.text.splitlines()
    row = json.loads(line)
    mine, kafkas = canonical(row), canonical(golden)
    for section in kafkas:
        assert mine[section] == kafkas[section], section
    # each record Kafka's loader refused is one problem, at the offset Kafka names
    offsets = [int(p["fault"].rsplit(" ", 1)[1]) for p in golden["problems"] if "from offset" in p["fault"]]
    assert [p["offset"] for p in row["problems"]] == offsets
    assert [p["message"] for p in row["problems"]] == [p["message"] for p in golden["problems"]]


@pytest.mark.parametrize(("name", "snapshot"), [("log", False), ("snap", True)])
def test_the_goldens_inputs_are_the_scenarios(tmp_path: Path, name: str, snapshot: bool) -> None:
    """``logs/log`` and ``logs/snap`` are the scenario's log as ``scenario.write`` writes it today: a change
    to the scenario needs its goldens made again (MANIFEST.md)."""
    written = sc.write(tmp_path, snapshot=snapshot)
    kept = DATA / "logs" / name / "__cluster_metadata-0"
    assert sorted(p.name for p in written.iterdir()) == sorted(p.name for p in kept.iterdir())
    for p in written.iterdir():
        assert p.read_bytes() == (kept / p.name).read_bytes(), p.name


def test_the_text_shows_kafkas_quota_in_full() -> None:
    """The quota Kafka's own classes wrote (``ClientQuotaRecord`` value 1048576.0, logs/kafka) is shown as
    written, not rounded to six digits (it is removed at offset 41)."""
    r = run_cli(["metadata", "--at-offset", "36", str(DATA / "logs" / "kafka" / "__cluster_metadata-0")])
    assert r.exit_code == 0, r.errtext
    assert "  user=alice: producer_byte_rate=1048576\n" in r.text
