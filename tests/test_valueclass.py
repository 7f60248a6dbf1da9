"""The value classes of :mod:`kseg.valueclass` behave as the dataclasses they replaced: compared and shown by
their fields, copied with changes, a frozen one unassignable and hashable, both pickled whole."""

from __future__ import annotations

import dataclasses
import io
import pickle

import pytest

from kseg.runtime.run import Run
from kseg.storage.context import ReadContext, RsmKeys
from kseg.storage.partition import Partition, Segment
from kseg.storage.stores.local import LocalStore
from kseg.valueclass import FrozenValue, Value


class Point(Value):
    _fields = ("x", "y")

    def __init__(self, x: int, y: int, note: str = "") -> None:
        self.x, self.y, self.note = x, y, note  # ``note``: not a compared field


class Frozen(FrozenValue):
    _fields = ("x", "y")

    def __init__(self, x: int, y: float) -> None:
        self._set(x=x, y=y)


def test_a_value_is_compared_and_shown_by_its_fields_only() -> None:
    assert Point(1, 2) == Point(1, 2, note="other") and Point(1, 2) != Point(1, 3)
    assert Point(1, 2).__eq__((1, 2)) is NotImplemented and Point(1, 2) != (1, 2)
    assert repr(Point(1, 2, "n")) == "Point(x=1, y=2)"
    with pytest.raises(TypeError):  # mutable and compared: not hashable, as a dataclass with eq
        hash(Point(1, 2))


def test_replace_copies_with_the_changes_and_refuses_an_unknown_name() -> None:
    p = Point(1, 2, "kept")
    q = p.replace(y=5)
    assert (q.x, q.y, q.note) == (1, 5, "kept") and (p.x, p.y) == (1, 2) and type(q) is Point
    with pytest.raises(TypeError, match="no field z"):
        p.replace(z=1)


def test_a_frozen_value_refuses_assignment_and_hashes_its_fields() -> None:
    f = Frozen(1, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.x = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del f.x
    assert hash(f) == hash(Frozen(1, 2.0)) and {f: 1}[Frozen(1, 2.0)] == 1
    nan = float("nan")
    same = Frozen(1, nan)
    assert same == same  # the fields compared as a tuple: identity first, as a dataclass compares them
    g = f.replace(x=2)
    assert (g.x, g.y) == (2, 2.0) and (f.x, f.y) == (1, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.y = 0.0  # type: ignore[misc]


def test_the_nouns_pickle_and_compare_as_before() -> None:
    store = LocalStore(ReadContext())
    seg = Segment(0, "/d/t-0/00000000000000000000.log", log_bytes=10, store=store)
    part = Partition("/d/t-0", [seg], store=store)
    assert seg == Segment(0, "/d/t-0/00000000000000000000.log", log_bytes=10, store=LocalStore(ReadContext()))
    assert "store" not in repr(seg) and repr(seg).startswith("Segment(base_offset=0, log='/d/t-0/")
    back = pickle.loads(pickle.dumps(part))
    assert back == part and back.segments[0].log_bytes == 10
    assert part.replace(segments=[]).segments == [] and part.segments == [seg]
    context = ReadContext(max_rate=5e6, keys=RsmKeys((("kp", "kp.pem", b"pem"),)))
    assert pickle.loads(pickle.dumps(context)) == context and hash(context) == hash(
        ReadContext(5e6, False, context.keys)
    )
    keyed = ReadContext(max_rate=1e6).with_keys(context.keys)
    assert keyed.keys == context.keys and keyed.max_rate == 1e6
    with pytest.raises(ValueError, match="more than 0"):
        ReadContext(max_rate=0)
    run = Run(io.BytesIO(), io.BytesIO(), quiet=True)
    assert isinstance(run.context, ReadContext) and run.replace(quiet=False).context is run.context
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.quiet = False  # type: ignore[misc]
