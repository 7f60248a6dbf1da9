"""Bad data never escapes a parser as anything but Kafka's own texts (or Kafka's own crash)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.decoders import PARSERS, parser_for
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.control import control_record_text
from tests.decoders.conftest import corpus_records

SEEDS = [(r.key, r.value) for r in corpus_records("__consumer_offsets-0") if not r.control] + [
    (r.key, r.value) for r in corpus_records("__cluster_metadata-0")
]

maybe_bytes = st.one_of(st.none(), st.binary(max_size=64))


def _check(name: str, offset: int, key, value) -> None:
    parser = parser_for(name)
    try:
        out = parser.parse(offset, key, value)
    except UncaughtJavaException as exc:
        # only where Kafka's tool itself dies
        assert name == "transaction-log" or (key is None and name in ("offsets", "share-group-state"))
        assert exc.jvm_line().startswith('Exception in thread "main" ')
        return
    assert isinstance(out, tuple) and len(out) == 2
    assert all(x is None or isinstance(x, str) for x in out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PARSERS)), key=maybe_bytes, value=maybe_bytes)
def test_random_bytes(name: str, key, value) -> None:
    _check(name, 1, key, value)


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(sorted(PARSERS)), seed=st.sampled_from(SEEDS), data=st.data())
def test_mutated_real_records(name: str, seed, data) -> None:
    key, value = seed

    def mutate(b):
        if b is None or not b:
            return b
        b = bytearray(b)
        for _ in range(data.draw(st.integers(1, 3))):
            i = data.draw(st.integers(0, len(b) - 1))
            b[i] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(b)))
        return bytes(b[:cut]) if data.draw(st.booleans()) else bytes(b)

    _check(name, 2, mutate(key), mutate(value))


@settings(max_examples=200, deadline=None)
@given(type_id=st.integers(-1, 8), value=maybe_bytes)
def test_control_records(type_id: int, value) -> None:
    try:
        out = control_record_text(type_id, b"\x00\x00\x00\x00", value)
    except UncaughtJavaException:
        return
    assert out is None or out.startswith(" ")
