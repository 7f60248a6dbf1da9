"""Fuzz cases above one file: a log directory's names and a remote tier's layout (issue 32).

Besides damaging one file of a partition directory (:mod:`tests.fuzz.driver`), a case may:

* **names**: lay the partition out in a log directory whose names Kafka parses its own way -- a second
  copy under a name Kafka reads as the same partition (``orders-00``, ``orders-٠``), names that are no
  partition (``²``, ``orders.0``, ``orders-0²``), transition suffixes (``-delete``, ``-stray``), stray
  files beside the segments (``²``, ``０.log``, ``README.log``, ``.log``, ``*.log.deleted``, ``*.swap``),
  a broker's text files damaged -- and run the commands that walk a log directory;
* **tiered**: copy the partition's segments as Aiven's tiered-storage plugin does (manifest, chunks,
  ``.indexes``; zstd or not), with a ``__remote_log_metadata`` partition naming them, then damage one
  object (the manifest's JSON, the ``.indexes`` bytes, a chunk of the ``.log``), move one under another
  key (another start offset, another partition, another topic id) or remove it, and run the reading
  commands on the prefix and ``kseg tiered`` on the metadata and the store.

Each returns the command lines to run and the root whose every file must be unchanged afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import shutil
from pathlib import Path

from tests.fuzz import mutators

TOPIC_ID = "MWJ6FHTfRYy67jzwZdeqSQ"
OTHER_TOPIC_ID = "ZtkM3jXGTZeXkwZ3aAJvPA"
# names a broker's LogManager parses as the partition (Integer.parseInt takes any Unicode digit), or not at all
SAME_PARTITION = ("{topic}-0{n}", "{topic}-{arabic}", "{topic}-+{n}")
NOT_PARTITIONS = ("²", "{topic}.{n}", "{topic}-{n}²", "{topic}-{n}-delete", "{topic}-{n}.abc-stray", "-{n}", "{topic}-")
STRAY_FILES = ("²", "０.log", "README.log", ".log", "0000.log.deleted", "00000000000000000000.index.swap")


def _arabic(n: str) -> str:
    """``n`` in Arabic-Indic digits (U+0660..U+0669): Java's ``Character.isDigit`` and ``parseInt`` take them."""
    return "".join(chr(0x660 + int(c)) for c in n)


def names_case(root: Path, seed: Path, rng: random.Random) -> tuple[Path, list[list[str]]]:
    """A log directory under ``root`` holding ``seed`` and name trouble; the command lines to run on it."""
    from tests.fuzz.driver import add_text_files

    logdir = root / "data"
    topic, _, n = seed.name.rpartition("-")
    part = logdir / seed.name
    shutil.copytree(seed, part)
    texts = add_text_files(part)
    fill = {"topic": topic or "t", "n": n or "0", "arabic": _arabic(n or "0")}
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(4)
        if kind == 0:  # a second copy Kafka reads as the same partition ("Duplicate log directories")
            name = rng.choice(SAME_PARTITION).format(**fill)
            if not (logdir / name).exists():
                shutil.copytree(seed, logdir / name)
        elif kind == 1:  # a directory that is no partition, holding segments or not
            name = rng.choice(NOT_PARTITIONS).format(**fill)
            if not (logdir / name).exists():
                shutil.copytree(seed, logdir / name) if rng.random() < 0.5 else (logdir / name).mkdir()
        elif kind == 2:  # a stray file beside the segments, or beside the partitions
            where = part if rng.random() < 0.7 else logdir
            head = (seed / _first_log(seed)).read_bytes()[:200] if (seed / _first_log(seed)).exists() else b""
            (where / rng.choice(STRAY_FILES)).write_bytes(rng.choice([b"", b"x" * 100, head]))
        else:  # a broker's text file damaged
            target = rng.choice(texts)
            target.write_bytes(mutators.mutate_text(target.read_bytes(), rng))
    out = root / "out"
    out.mkdir()
    lines = [
        ["logdir", "--format", "json", str(logdir)],
        ["verify-index", "--quiet", str(logdir)],
        ["rebuild-index", "--check", str(logdir)],
        ["txn", str(logdir)],
        ["compaction", str(logdir)],
        ["lookup-offset", str(rng.randint(-1, 300)), str(part)],
        ["export", str(logdir), "-o", str(out / "records.parquet")],
    ]
    return logdir, lines


def _first_log(seed: Path) -> str:
    logs = sorted(p.name for p in seed.glob("*.log"))
    return logs[0] if logs else "00000000000000000000.log"


def _segment_id(partition: str, base: int) -> str:
    digest = hashlib.sha256(f"{partition}/{base}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _copy_tiered(remote: Path, seed: Path, topic: str, number: int, compression: bool) -> list[bytes]:
    """``seed``'s segments under ``remote`` in Aiven's layout; the ``__remote_log_metadata`` values naming them."""
    from kseg.storage.remote_keys import object_key
    from kseg.testing import remote_metadata as rm
    from kseg.testing.aiven import write_aiven_segment

    logs = sorted(seed.glob("*.log"))
    values = []
    for i, log in enumerate(logs):
        base = int(log.stem)
        end = int(logs[i + 1].stem) - 1 if i + 1 < len(logs) else base + 1000
        seg = _segment_id(seed.name, base)

        def key_of(suffix: str, base: int = base, seg: str = seg) -> str:
            return object_key("aiven", "", topic, TOPIC_ID, number, base, seg, suffix)

        write_aiven_segment(
            remote,
            log,
            key_of,
            topic=topic,
            topic_id=TOPIC_ID,
            partition=number,
            segment_id=seg,
            end_offset=end,
            chunk_size=1024,
            compression=compression,
        )
        sid = rm.SegmentId(TOPIC_ID, topic, number, seg)
        values.append(rm.segment_metadata(sid, base, end, size=log.stat().st_size))
        values.append(rm.segment_update(sid, rm.COPY_SEGMENT_FINISHED))
    return values


def _damage(remote: Path, rng: random.Random) -> None:
    """One object of the tier damaged, moved under another key, or removed."""
    objects = sorted(p for p in remote.rglob("*") if p.is_file())
    if not objects:
        return
    target = rng.choice(objects)
    choice = rng.randrange(5)
    if choice == 0 and target.suffix == ".rsm-manifest":
        text = target.read_bytes()
        try:
            manifest = json.loads(text)
            field = rng.choice(sorted(manifest))
            manifest[field] = rng.choice([None, -1, 2**63, "x", [], {}, manifest[field]])
            target.write_text(json.dumps(manifest))
        except ValueError:
            target.write_bytes(mutators.mutate_text(text, rng))
    elif choice <= 1:
        data = target.read_bytes()
        if target.suffix == ".log":
            target.write_bytes(rng.choice(mutators.LOG_MUTATORS)(data, mutators.boundaries(data), rng))
        else:
            target.write_bytes(mutators.mutate_index(data, rng) if data else b"\0" * rng.choice([1, 8, 100]))
    elif choice == 2:  # copied under another start offset, partition or topic id: the RSM would not fetch it
        stem, _, rest = target.name.partition("-")
        moved = rng.choice(
            [
                target.with_name(f"{int(stem) + 1:020d}-{rest}") if stem.isascii() and stem.isdigit() else target,
                target.parent.parent / "7" / target.name,
                Path(str(target).replace(TOPIC_ID, OTHER_TOPIC_ID)),
            ]
        )
        moved.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, moved)
        if rng.random() < 0.5:
            target.unlink()
    elif choice == 3:
        target.unlink()
    else:
        target.write_bytes(b"")


def tiered_case(root: Path, seed: Path, rng: random.Random) -> tuple[Path, list[list[str]]]:
    """A remote tier under ``root`` holding ``seed``'s segments, damaged; the command lines to run on it."""
    from kseg.testing import remote_metadata as rm

    topic, _, n = seed.name.rpartition("-")
    topic, number = topic or "t", int(n) if n.isascii() and n.isdigit() else 0
    remote = root / "remote"
    values = _copy_tiered(remote, seed, topic, number, compression=rng.random() < 0.5)
    meta = rm.write_metadata_log(root / "__remote_log_metadata-0", values)
    if rng.random() < 0.25:  # the metadata log damaged instead of (or as well as) the objects
        log = next(meta.glob("*.log"))
        data = log.read_bytes()
        log.write_bytes(rng.choice(mutators.LOG_MUTATORS)(data, mutators.boundaries(data), rng))
    if rng.random() < 0.85:
        _damage(remote, rng)
    prefix = remote / f"{topic}-{TOPIC_ID}" / str(number)
    logs = sorted(prefix.glob("*.log")) if prefix.is_dir() else []
    lines = [
        ["verify-index", "--quiet", str(prefix)],
        ["lookup-offset", str(rng.randint(-1, 300)), str(prefix)],
        ["txn", str(prefix)],
        ["tiered", "--format", "json", str(meta), "--remote", str(remote)],
        ["tiered", str(meta), "--remote", str(remote)],
    ]
    if logs:
        lines.insert(0, ["dump", "--deep-iteration", "--files", str(rng.choice(logs))])
    return root, lines
