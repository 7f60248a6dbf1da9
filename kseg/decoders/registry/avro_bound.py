"""The bound on Avro values that take no byte, for the Python reader (fastavro), checked before it reads.

A ``null`` takes no byte, nor does an empty record, a zero-size fixed, or a record of only such fields: an
array of them costs nothing per item (six bytes may claim 2^40 items, and fastavro builds the whole list),
and an array of records with many ``null`` fields costs one byte per item yet prints every field (20 KB
printed 46 MB).  ``kseg._avro`` counts every such value it reads -- the leaves: a ``null``, an empty record,
a zero-size fixed, except the one a union's index chose, whose byte is the index -- and refuses a payload of
more than :data:`MAX_ZERO_WIDTH` (``kseg/_avro.c``); the Python reader must refuse the same payloads with
the same reason, before fastavro allocates.  Every other value takes a byte at least, so a payload of n bytes
holds at most n + :data:`MAX_ZERO_WIDTH` values.  Whether a schema can hold more leaves than the bound is
known when it is parsed (:func:`needs_bound`): only then is a payload walked first (:class:`Bound`), skipping
values as fastavro reads them, without building any.
"""

from __future__ import annotations

from typing import Any

from kseg.limits import INT64_MAX

MAX_ZERO_WIDTH = 1 << 19  # kseg/_avro.c's MAX_ZERO_WIDTH
REFUSED = f"more than {MAX_ZERO_WIDTH} values that take no byte (null, an empty record) in the payload: not read"
_MASK64 = (1 << 64) - 1
_FIXED = {"boolean": 1, "float": 4, "double": 8}
_MANY = MAX_ZERO_WIDTH + 1  # more leaves than the bound: a recursive type of no byte, an array of leaves


def min_width(schema: Any, names: dict, seen: tuple = ()) -> int:
    """The fewest bytes a value of ``schema`` (fastavro's parsed form) takes: an array's or map's count bound."""
    if isinstance(schema, str) and schema in names:
        if schema in seen:
            return 0
        return min_width(names[schema], names, seen + (schema,))
    if isinstance(schema, list):
        return 1
    kind = schema if isinstance(schema, str) else schema["type"]
    if kind in ("record", "error"):
        return sum(min_width(f["type"], names, seen) for f in schema["fields"])
    if kind == "fixed":
        return int(schema["size"])
    return {"null": 0, "float": 4, "double": 8}.get(kind, 1)


def resolve(schema: Any, names: dict) -> Any:
    """A named type's definition; any other schema itself."""
    return names[schema] if isinstance(schema, str) and schema in names else schema


def is_leaf(schema: Any, names: dict) -> bool:
    """Whether a value of ``schema`` is one leaf of no byte: ``null``, a record of no field, a zero-size fixed."""
    s = resolve(schema, names)
    if isinstance(s, list):
        return False
    kind = s if isinstance(s, str) else s["type"]
    if kind in ("record", "error"):
        return not s["fields"]
    return kind == "null" or (kind == "fixed" and int(s["size"]) == 0)


def leaves(schema: Any, names: dict, seen: tuple = ()) -> int:
    """The leaves in a value of ``schema``, a type of no byte (:func:`min_width` 0); a type inside itself
    (which no payload ends) counts past the bound."""
    if isinstance(schema, str) and schema in names:
        if schema in seen:
            return _MANY
        return min(_MANY, leaves(names[schema], names, seen + (schema,)))
    if is_leaf(schema, names):
        return 1
    return min(_MANY, sum(leaves(f["type"], names, seen) for f in schema["fields"]))  # a record of no byte


def most_leaves(schema: Any, names: dict, seen: tuple = ()) -> int:
    """The most leaves a value of ``schema`` may hold (:data:`_MANY` past the bound): an array or a map of
    values that may hold one, or a type inside itself, has no bound of its own."""
    if isinstance(schema, str) and schema in names:
        if schema in seen:
            return _MANY  # recursion: each level may hold leaves; walked, not guessed
        return most_leaves(names[schema], names, seen + (schema,))
    if is_leaf(schema, names):
        return 1
    if isinstance(schema, list):  # the chosen branch: a leaf chosen by the index is not counted
        return max([most_leaves(b, names, seen) for b in schema if not is_leaf(b, names)] or [0])
    kind = schema if isinstance(schema, str) else schema["type"]
    if kind in ("record", "error"):
        return min(_MANY, sum(most_leaves(f["type"], names, seen) for f in schema["fields"]))
    if kind in ("array", "map"):
        return _MANY if most_leaves(schema["items" if kind == "array" else "values"], names, seen) else 0
    return 0


def needs_bound(schema: Any, names: dict) -> bool:
    """Whether a value of ``schema`` may hold more leaves than the bound: only then is a payload walked."""
    return most_leaves(schema, names) > MAX_ZERO_WIDTH


class _End(Exception):
    """Where fastavro stops with its own error (the data ends, an index outside a union or an enum)."""


class Bound:
    """Walks a payload as fastavro reads it, counting the values that take no byte; nothing is built."""

    def __init__(self, schema: Any, names: dict) -> None:
        self.schema = schema
        self.names = names
        self.widths: dict[int, tuple[int, int]] = {}  # id of an array's item schema -> (min width, leaves)
        self.plans: dict[int, tuple] = {}  # id of a record schema -> its fields' steps (:meth:`plan`)

    def check(self, data: bytes) -> None:
        """Raises ValueError(:data:`REFUSED`) when ``data`` holds too many values of no byte before the point
        where fastavro would stop; else returns and fastavro reads (and gives any other reason)."""
        self.data, self.pos, self.zero = data, 0, 0
        try:
            self.walk(self.schema)
        except _End:
            pass
        except RecursionError:
            raise ValueError("the Avro datum nests too deep to bound its items: not read") from None
        finally:
            self.data = b""

    def long(self) -> int:
        """fastavro's ``read_long``: continuation bytes of any count, the value kept to 64 bits (shifts
        taken mod 64, as the machine's), then zigzag."""
        data, pos, n, shift = self.data, self.pos, 0, 0
        while True:
            if pos >= len(data):
                raise _End
            b = data[pos]
            pos += 1
            n = (n | (b & 0x7F) << (shift & 63)) & _MASK64
            shift += 7
            if not b & 0x80:
                break
        self.pos = pos
        return (n >> 1) ^ -(n & 1)

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.data):
            raise _End
        self.pos += n

    def count(self, n: int) -> None:
        self.zero += n
        if self.zero > MAX_ZERO_WIDTH:
            raise ValueError(REFUSED)

    def primitive(self, s: str) -> None:
        if s in ("int", "long"):
            self.long()
        elif s in ("string", "bytes"):
            self.skip(self.long())
        elif s == "null":
            self.count(1)
        else:
            self.skip(_FIXED[s])

    def walk(self, s: Any) -> None:
        if isinstance(s, str):
            self.walk(self.names[s]) if s in self.names else self.primitive(s)
            return
        if isinstance(s, list):
            i = self.long()
            if not -len(s) <= i < len(s):
                raise _End
            if not is_leaf(s[i], self.names):  # a leaf the index chose took the index's byte
                self.walk(s[i])
            return
        kind = s["type"]
        if kind in ("record", "error"):
            if not s["fields"]:
                self.count(1)
            for step in self.plan(s):
                if isinstance(step, int):
                    self.count(step)
                else:
                    self.walk(step)
        elif kind == "enum":
            i = self.long()
            if not -len(s["symbols"]) <= i < len(s["symbols"]):
                raise _End
        elif kind == "fixed":
            if int(s["size"]) == 0:
                self.count(1)
            self.skip(int(s["size"]))
        elif kind in ("array", "map"):
            self.items(s)
        else:
            self.walk(kind)

    def plan(self, record: dict) -> tuple:
        """A record's fields as walked: each field's type, but a run of leaf fields (which take no byte and
        cannot end the data) as its length, counted at once -- the same count, refused at the same field run."""
        plan = self.plans.get(id(record))
        if plan is None:
            steps: list = []
            for f in record["fields"]:
                if not is_leaf(f["type"], self.names):
                    steps.append(f["type"])
                elif steps and isinstance(steps[-1], int):
                    steps[-1] += 1
                else:
                    steps.append(1)
            plan = self.plans[id(record)] = tuple(steps)
        return plan

    def items(self, s: dict) -> None:
        item = s["items"] if s["type"] == "array" else s["values"]
        known = self.widths.get(id(item))
        if known is None:
            width = min_width(item, self.names) + (s["type"] == "map")
            known = self.widths[id(item)] = (width, leaves(item, self.names) if width == 0 else 0)
        width, per_item = known
        while True:
            count = self.long()
            if count == 0:
                return
            if count < 0:
                self.long()  # the block's size in bytes, which fastavro does not use
                count = -count
                if count > INT64_MAX:
                    continue  # -(-2^63) is itself in 64 bits: a range of no item
            if width == 0:  # the items take no byte: their leaves counted, not walked
                self.count(min(count, _MANY) * per_item)
                continue
            for _ in range(count):  # each takes a byte at least: the data ends within len(data) turns
                if s["type"] == "map":
                    self.skip(self.long())
                self.walk(item)
