"""Write ``kseg/decoders/schemas/releases/kraft-<line>.json``: the KRaft record types, highest versions,
top-level fields and tagged fields that the metadata classes of Kafka release ``<line>`` know, read from the specs
(``metadata/src/main/resources/common/metadata/*.json``) on that branch of an ``apache/kafka`` clone::

    python tests/data/kafka4x/make_kraft_table.py 3.6 <apache-kafka-git-dir> \\
        > kseg/decoders/schemas/releases/kraft-3.6.json

``--layout Name`` (repeatable) also writes that record's spec, its field names camel-cased, as the entry's
``layout``: for a record whose layout kseg's own schema does not have (3.3/3.4's ``AccessControlRecord`` and
version 0 of ``UserScramCredentialRecord``, re-laid in 3.5 without a version bump)::

    python tests/data/kafka4x/make_kraft_table.py 3.4 <apache-kafka-git-dir> \\
        --layout AccessControlRecord --layout UserScramCredentialRecord > kseg/decoders/schemas/releases/kraft-3.4.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

SPECS = "metadata/src/main/resources/common/metadata/"


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def camel(name: str) -> str:
    """A spec field name as kseg's schemas and Kafka's JSON converters spell it."""
    return name[0].lower() + name[1:]


def tagged_paths(struct: str, fields: list, out: list) -> None:
    """``Struct.field`` of every tagged field under ``struct``."""
    for f in fields:
        if "tag" in f:
            out.append(f"{struct}.{camel(f['name'])}")
        if "fields" in f:
            tagged_paths(f["type"].lstrip("[]"), f["fields"], out)


def camel_spec(fields: list) -> list:
    """``fields`` with every (nested) field name camel-cased, as kseg's schemas spell them."""
    return [
        {**f, "name": camel(f["name"]), **({"fields": camel_spec(f["fields"])} if "fields" in f else {})}
        for f in fields
    ]


def table(line: str, repo: str, layouts: tuple = ()) -> dict:
    commit = git(repo, "rev-parse", line).strip()
    records = {}
    for path in git(repo, "ls-tree", "--name-only", commit, SPECS).split():
        spec = json.loads(re.sub(r"//.*", "", git(repo, "show", f"{commit}:{path}")))
        if spec.get("type") != "metadata":
            continue
        paths: list = []
        tagged_paths(spec["name"], spec["fields"], paths)
        for common in spec.get("commonStructs", []):
            tagged_paths(common["name"], common["fields"], paths)
        records[str(spec["apiKey"])] = {
            "name": spec["name"],
            "highest": int(spec["validVersions"].split("-")[-1]),
            "fields": sorted(camel(f["name"]) for f in spec["fields"]),
            "tagged": sorted(paths),
        }
        if spec["name"] in layouts:
            records[str(spec["apiKey"])]["layout"] = {
                **{k: spec[k] for k in ("apiKey", "type", "name", "validVersions", "flexibleVersions")},
                "fields": camel_spec(spec["fields"]),
                **(
                    {"commonStructs": [{**c, "fields": camel_spec(c["fields"])} for c in spec["commonStructs"]]}
                    if "commonStructs" in spec
                    else {}
                ),
            }
    return {
        "kafkaLine": line,
        "kafkaCommit": commit,
        "source": "metadata/src/main/resources/common/metadata/*.json of apache/kafka",
        "records": dict(sorted(records.items(), key=lambda kv: int(kv[0]))),
    }


if __name__ == "__main__":
    args = sys.argv[3:]
    print(
        json.dumps(
            table(sys.argv[1], sys.argv[2], tuple(args[i + 1] for i, a in enumerate(args) if a == "--layout")), indent=1
        )
    )
