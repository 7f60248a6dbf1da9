"""Regenerate ``kseg/decoders/schemas/*.json`` from Kafka's JSON message specs.

Maintainer tool, never imported at run time::

    python -m kseg.decoders._schemagen /path/to/kafka/.git [REV [REV_4_0 [LINE=REV ...]]]

``REV`` is the release whose schemas are current (kseg pins Kafka 4.4's branch);
``REV_4_0`` the 4.0 branch, whose layouts of the messages in :data:`LEGACY` are
kept as ``<Name>@4.0.json``: records removed upstream, and layouts that changed
without a version bump (``kseg.decoders.coordinator`` chooses by the bytes).
Each ``LINE=REV`` (``3.9=refs/heads/3.9`` ...) is an older release line: a tagged
field of the current schemas missing from that line's spec is recorded in
``index.json``'s ``taggedSince`` with the first line that has it, so that
``--kafka-version`` drops it from the JSON as that release's converter does
(an unknown tag is kept aside, never printed).

Kafka describes every protocol and record message in JSON files (with ``//``
comments).  kseg keeps, per message, only the facts its reader and JSON writer
need -- field names, types, version ranges, nullability, tags, defaults -- in
its own compact files, one per message, so decoding needs no Kafka checkout.
The prose (``about``) and the code-generation hints kseg has no use for
(``entityType``, ``mapKey``, listeners) are dropped.  Field names are stored
in the camelCase form Kafka's generated JSON converters print.

Normalisations follow Kafka's generator (``FieldSpec``, ``Versions``):

* ``versions`` absent but ``taggedVersions`` present -> ``versions`` = tagged;
* a JSON ``null`` default is the empty default (``""``), not ``"null"``;
* numeric / boolean defaults become strings (as Jackson would bind them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Kafka spec files kseg needs, by directory.
SPEC_DIRS = (
    "group-coordinator/src/main/resources/common/message",
    "share-coordinator/src/main/resources/common/message",
    "transaction-coordinator/src/main/resources/common/message",
    "metadata/src/main/resources/common/metadata",
    "storage/src/main/resources/message",
)
CLIENT_SPECS = (
    "clients/src/main/resources/common/message/KRaftVersionRecord.json",
    "clients/src/main/resources/common/message/VotersRecord.json",
    "clients/src/main/resources/common/message/SnapshotHeaderRecord.json",
    "clients/src/main/resources/common/message/SnapshotFooterRecord.json",
    "clients/src/main/resources/common/message/LeaderChangeMessage.json",
    "clients/src/main/resources/common/message/ConsumerProtocolSubscription.json",
    "clients/src/main/resources/common/message/ConsumerProtocolAssignment.json",
)
OUT = Path(__file__).resolve().parent / "schemas"
#: Messages whose Kafka 4.0 layout is kept beside the current one.
LEGACY = {
    "4.0": (
        "ShareGroupPartitionMetadataKey",
        "ShareGroupPartitionMetadataValue",
        "ShareGroupMetadataValue",
        "ShareGroupStatePartitionMetadataValue",
        "ShareSnapshotValue",
        "ShareUpdateValue",
    ),
}


def strip_comments(text: str) -> str:
    """Remove ``//`` line comments that are outside JSON strings."""
    out = []
    i, n, in_str = 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _default(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _field(spec: dict) -> dict:
    name = spec["name"]
    out: dict = {"name": name[:1].lower() + name[1:], "type": spec["type"].strip()}
    tagged = (spec.get("taggedVersions") or "").strip()
    versions = (spec.get("versions") or "").strip() or tagged
    if not versions:
        raise ValueError(f"field {name} has no versions")
    out["versions"] = versions
    for key in ("nullableVersions", "taggedVersions", "flexibleVersions"):
        v = (spec.get(key) or "").strip()
        if v and v != "none":
            out[key] = v
    if "tag" in spec:
        out["tag"] = int(spec["tag"])
    d = _default(spec.get("default"))
    if d:
        out["default"] = d
    for flag in ("ignorable", "zeroCopy"):
        if spec.get(flag):
            out[flag] = True
    if spec.get("fields"):
        out["fields"] = [_field(f) for f in spec["fields"]]
    return out


def convert(spec: dict) -> dict:
    """Kafka message spec -> kseg compact schema."""
    out: dict = {"name": spec["name"], "type": spec["type"]}
    if spec.get("apiKey") is not None:
        out["apiKey"] = int(spec["apiKey"])
    out["validVersions"] = spec["validVersions"].strip()
    out["flexibleVersions"] = spec["flexibleVersions"].strip()
    out["fields"] = [_field(f) for f in spec.get("fields", [])]
    if spec.get("commonStructs"):
        out["commonStructs"] = [
            {"name": s["name"], "versions": s["versions"].strip(), "fields": [_field(f) for f in s["fields"]]}
            for s in spec["commonStructs"]
        ]
    return out


def _c(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _render_fields(fields: list, indent: str) -> str:
    lines = []
    for f in fields:
        head = {k: v for k, v in f.items() if k != "fields"}
        if "fields" in f:
            lines.append(
                f'{indent}{_c(head)[:-1]},"fields":[\n{_render_fields(f["fields"], indent + " ")}\n{indent}]}}'
            )
        else:
            lines.append(indent + _c(head))
    return ",\n".join(lines)


def render(schema: dict) -> str:
    """One field per line, so diffs after a Kafka upgrade stay readable."""
    head = {k: v for k, v in schema.items() if k not in ("fields", "commonStructs")}
    text = _c(head)[:-1] + ',\n"fields":[\n' + _render_fields(schema["fields"], " ") + "\n]"
    if "commonStructs" in schema:
        parts = []
        for s in schema["commonStructs"]:
            sh = {k: v for k, v in s.items() if k != "fields"}
            parts.append(f' {_c(sh)[:-1]},"fields":[\n{_render_fields(s["fields"], "  ")}\n ]}}')
        text += ',\n"commonStructs":[\n' + ",\n".join(parts) + "\n]"
    text += "}\n"
    assert json.loads(text) == schema
    return text


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True, text=True).stdout


def _spec_paths(gitdir: str, rev: str) -> list[str]:
    names = _git(gitdir, "ls-tree", "-r", "--name-only", rev).splitlines()
    return [p for p in names if p.endswith(".json") and p.rsplit("/", 1)[0] in SPEC_DIRS] + list(CLIENT_SPECS)


def _tagged_paths(schema: dict) -> set[str]:
    """``"Struct.field"`` of every tagged field: the message's own fields under its name, an inline
    or common struct's under the struct's type name (as ``kseg.decoders.schema`` names them)."""
    out: set[str] = set()

    def walk(fields: list, struct: str) -> None:
        for f in fields:
            if "tag" in f:
                out.add(f"{struct}.{f['name']}")
            if f.get("fields"):
                walk(f["fields"], f["type"].removeprefix("[]"))

    walk(schema.get("fields", []), schema["name"])
    for s in schema.get("commonStructs", []):
        walk(s["fields"], s["name"])
    return out


def _spec(gitdir: str, rev: str, path: str) -> dict:
    """One message spec of Kafka's tree at ``rev``, converted (see :func:`convert`)."""
    return convert(json.loads(strip_comments(_git(gitdir, "show", f"{rev}:{path}"))))


def _write_layouts(gitdir: str, legacy_rev: str, index: dict) -> None:
    """The ``LEGACY`` layouts of an older release, written as ``<Name>@<label>.json``."""
    for label, wanted in LEGACY.items():
        index["layouts"][label] = {
            "kafkaCommit": _git(gitdir, "rev-parse", legacy_rev).strip(),
            "messages": sorted(wanted),
        }
        for path in _spec_paths(gitdir, legacy_rev):
            if path.rsplit("/", 1)[-1][:-5] in wanted:
                schema = _spec(gitdir, legacy_rev, path)
                (OUT / f"{schema['name']}@{label}.json").write_text(render(schema))


def _tagged_since(gitdir: str, rev: str, paths: list[str], older: list[list[str]], index: dict) -> dict:
    """Message -> tagged path -> the first release line (of ``older``, oldest first) that has it, or "current"."""
    since: dict = {}
    for line, line_rev in older:
        index.setdefault("releaseCommits", {})[line] = _git(gitdir, "rev-parse", line_rev).strip()
        schemas = {}
        for path in _spec_paths(gitdir, line_rev):
            try:
                sch = _spec(gitdir, line_rev, path)
            except subprocess.CalledProcessError:
                continue
            schemas[sch["name"]] = sch
        for path in sorted(paths):
            cur = _spec(gitdir, rev, path)
            old_spec = schemas.get(cur["name"])
            if old_spec is None:
                continue
            for tag_path in _tagged_paths(cur) - _tagged_paths(old_spec):
                since.setdefault(cur["name"], {}).setdefault(tag_path, None)
        for name, fields in since.items():
            old_spec = schemas.get(name)
            for tag_path, first in list(fields.items()):
                if first is None and old_spec is not None and tag_path in _tagged_paths(old_spec):
                    fields[tag_path] = line
    for fields in since.values():  # present in no older line given: new with the current release
        for tag_path, first in fields.items():
            if first is None:
                fields[tag_path] = "current"
    return since


def main(argv: list[str]) -> int:
    gitdir = argv[0]
    rev = argv[1] if len(argv) > 1 else "HEAD"
    commit = _git(gitdir, "rev-parse", rev).strip()
    paths = _spec_paths(gitdir, rev)
    index: dict = {"kafkaCommit": commit, "layouts": {}, "metadata": {}, "remoteLogMetadata": {}}
    OUT.mkdir(exist_ok=True)
    for stale in OUT.glob("*.json"):
        stale.unlink()
    for path in sorted(paths):
        spec = json.loads(strip_comments(_git(gitdir, "show", f"{rev}:{path}")))
        schema = convert(spec)
        if spec["type"] == "metadata":
            table = "remoteLogMetadata" if path.startswith("storage/") else "metadata"
            index[table][str(schema["apiKey"])] = schema["name"]
        (OUT / f"{schema['name']}.json").write_text(render(schema))
    if len(argv) >= 3:
        _write_layouts(gitdir, argv[2], index)
    since = _tagged_since(gitdir, rev, paths, [a.split("=", 1) for a in argv[3:]], index)
    if since:
        index["taggedSince"] = since
    (OUT / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(paths)} schemas from {commit}")
    return 0


if __name__ == "__main__":  # pragma: no cover - maintainer tool
    sys.exit(main(sys.argv[1:]))
