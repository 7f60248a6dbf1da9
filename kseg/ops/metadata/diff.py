"""``--diff``: two images compared -- two points of one log, or two nodes' copies -- section by section:
what was created, deleted and changed, keyed as Kafka keys each section (brokers and controllers by id,
topics by name, partitions by number, configs by resource and key, ACLs by id, quotas by entity, SCRAM
users by name and mechanism, tokens by id).

It compares the images' JSON forms (:func:`kseg.render.metadata.image_row` gives them): the values shown
are the values compared, and a secret never kept is never compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

CREATED, DELETED, CHANGED = "created", "deleted", "changed"


@dataclass(frozen=True)
class Difference:
    section: str
    key: str
    kind: str  # created | deleted | changed
    before: Any
    after: Any


def _by(items: list[dict], key: Callable[[dict], str]) -> dict[str, dict]:
    return {key(item): item for item in items}


def _entity(q: dict) -> str:
    return ",".join(f"{k}={'(default)' if v is None else v}" for k, v in sorted(q["entity"].items()))


#: section -> how one of its entries is named (the key it is compared by)
KEYS: tuple[tuple[str, Callable[[dict], str]], ...] = (
    ("controllers", lambda c: str(c["id"])),
    ("brokers", lambda b: str(b["id"])),
    ("acls", lambda a: a["id"]),
    ("clientQuotas", _entity),
    ("scramUsers", lambda s: f"{s['name']} {s['mechanism']}"),
    ("delegationTokens", lambda t: t["tokenId"]),
)


def differences(left: dict, right: dict) -> list[Difference]:
    """What changed from the image row ``left`` to ``right``."""
    out = list(_mapping("features", left["features"], right["features"]))
    for section, key in KEYS:
        out += _entries(section, _by(left[section], key), _by(right[section], key))
    out += _topics(left["topics"], right["topics"])
    out += _configs(left["configs"], right["configs"])
    if left["producerIds"] != right["producerIds"]:
        out.append(Difference("producerIds", "nextProducerId", CHANGED, left["producerIds"], right["producerIds"]))
    return out


def _mapping(section: str, a: dict, b: dict, prefix: str = "") -> Iterator[Difference]:
    for k in sorted(set(a) | set(b), key=str):
        if k not in b:
            yield Difference(section, prefix + str(k), DELETED, a[k], None)
        elif k not in a:
            yield Difference(section, prefix + str(k), CREATED, None, b[k])
        elif _canon(a[k]) != _canon(b[k]):
            yield Difference(section, prefix + str(k), CHANGED, a[k], b[k])


def _entries(section: str, a: dict[str, dict], b: dict[str, dict]) -> list[Difference]:
    return list(_mapping(section, a, b))


def _topics(a: list[dict], b: list[dict]) -> list[Difference]:
    """A topic created, deleted, or replaced by one of the same name with another ID; else its partitions."""
    out = []
    left, right = _by(a, lambda t: t["name"]), _by(b, lambda t: t["name"])
    for name in sorted(set(left) | set(right)):
        x, y = left.get(name), right.get(name)
        if y is None or x is None or x["id"] != y["id"]:
            if x is not None:
                out.append(Difference("topics", name, DELETED, _summary(x), None))
            if y is not None:
                out.append(Difference("topics", name, CREATED, None, _summary(y)))
            continue
        px = {str(p["partition"]): p for p in x["partitions"]}
        py = {str(p["partition"]): p for p in y["partitions"]}
        out += _mapping("partitions", px, py, prefix=f"{name}-")
    return out


def _summary(topic: dict) -> dict:
    return {"id": topic["id"], "partitions": len(topic["partitions"])}


def _configs(a: list[dict], b: list[dict]) -> list[Difference]:
    def keyed(items: list[dict]) -> dict[str, Any]:
        return {
            f"{c['resourceType'].lower()} {c['resourceName'] or '(default)'} {k}": v
            for c in items
            for k, v in c["configs"].items()
        }

    return list(_mapping("configs", keyed(a), keyed(b)))


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
