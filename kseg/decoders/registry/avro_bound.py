"""The bound on Avro items that take no byte, for the Python reader (fastavro), checked before it reads.

An array of ``null`` (or of an empty record, a zero-size fixed...) costs no byte per item: a payload
of six bytes may claim 2^40 of them, and fastavro builds the whole list.  ``kseg._avro`` counts such
items and refuses a payload of more than :data:`MAX_ZERO_WIDTH` (``kseg/_avro.c``); the Python reader
must refuse the same payloads with the same reason, before fastavro allocates.  Whether a schema has
such an array is known when it is parsed (:func:`needs_bound`): only then is a payload walked first
(:class:`Bound`), skipping values as fastavro reads them, without building any.
"""

from __future__ import annotations

from typing import Any

from kseg.limits import INT64_MAX

MAX_ZERO_WIDTH = 1 << 20  # kseg/_avro.c's MAX_ZERO_WIDTH
REFUSED = (
    f"more than {MAX_ZERO_WIDTH} items that take no byte (null or an empty record) in the payload's arrays: not read"
)
_MASK64 = (1 << 64) - 1
_FIXED = {"boolean": 1, "float": 4, "double": 8}


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


def needs_bound(schema: Any, names: dict) -> bool:
    """Whether ``schema`` has an array whose items may take no byte (a map's key takes at least one)."""
    stack, seen = [schema], set()
    while stack:
        s = stack.pop()
        if isinstance(s, str):
            if s in names and s not in seen:
                seen.add(s)
                stack.append(names[s])
        elif isinstance(s, list):
            stack.extend(s)
        elif s["type"] in ("record", "error"):
            stack.extend(f["type"] for f in s["fields"])
        elif s["type"] == "array":
            if min_width(s["items"], names) == 0:
                return True
            stack.append(s["items"])
        elif s["type"] == "map":
            stack.append(s["values"])
        else:
            stack.append(s["type"])  # a primitive's, an enum's or a fixed's: nothing; a name's: its type
    return False


class _End(Exception):
    """Where fastavro stops with its own error (the data ends, an index outside a union or an enum)."""


class Bound:
    """Walks a payload as fastavro reads it, counting the items that take no byte; nothing is built."""

    def __init__(self, schema: Any, names: dict) -> None:
        self.schema = schema
        self.names = names
        self.widths: dict[int, int] = {}  # id of an array's item schema -> its min width

    def check(self, data: bytes) -> None:
        """Raises ValueError(:data:`REFUSED`) when ``data`` claims too many items of no byte before the point
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

    def walk(self, s: Any) -> None:
        if isinstance(s, str):
            if s in self.names:
                self.walk(self.names[s])
            elif s in ("int", "long"):
                self.long()
            elif s in ("string", "bytes"):
                self.skip(self.long())
            elif s != "null":
                self.skip(_FIXED[s])
            return
        if isinstance(s, list):
            i = self.long()
            if not -len(s) <= i < len(s):
                raise _End
            self.walk(s[i])
            return
        kind = s["type"]
        if kind in ("record", "error"):
            for f in s["fields"]:
                self.walk(f["type"])
        elif kind == "enum":
            i = self.long()
            if not -len(s["symbols"]) <= i < len(s["symbols"]):
                raise _End
        elif kind == "fixed":
            self.skip(int(s["size"]))
        elif kind in ("array", "map"):
            self.items(s)
        else:
            self.walk(kind)

    def items(self, s: dict) -> None:
        item = s["items"] if s["type"] == "array" else s["values"]
        width = self.widths.get(id(item))
        if width is None:
            width = self.widths[id(item)] = min_width(item, self.names) + (s["type"] == "map")
        while True:
            count = self.long()
            if count == 0:
                return
            if count < 0:
                self.long()  # the block's size in bytes, which fastavro does not use
                count = -count
                if count > INT64_MAX:
                    continue  # -(-2^63) is itself in 64 bits: a range of no item
            if width == 0:  # the items take no byte: counted, not walked
                self.zero += min(count, MAX_ZERO_WIDTH + 1)
                if self.zero > MAX_ZERO_WIDTH:
                    raise ValueError(REFUSED)
                continue
            for _ in range(count):  # each takes a byte at least: the data ends within len(data) turns
                if s["type"] == "map":
                    self.skip(self.long())
                self.walk(item)
