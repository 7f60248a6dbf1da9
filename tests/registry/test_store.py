"""The ``_schemas`` replay (``KafkaStoreReaderThread`` + ``KafkaStoreMessageHandler`` + ``InMemoryCache``),
the framings and Java's float text, record by record."""

from __future__ import annotations

import json
import struct

import pytest

from kseg.decoders.registry.framing import FramingError, message_indexes, schema_ref
from kseg.decoders.registry.store import SchemaStore, split_subject
from kseg.errors import InputError


def _key(subject: str, version: int) -> bytes:
    return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}).encode()


def _value(subject: str, version: int, sid: int, deleted: bool = False, **extra) -> bytes:
    return json.dumps(
        {"subject": subject, "version": version, "id": sid, "schema": '"string"', "deleted": deleted, **extra}
    ).encode()


def test_soft_delete_keeps_the_id_a_tombstone_drops_it() -> None:
    s = SchemaStore()
    s.apply(_key("a", 1), _value("a", 1, 10))
    s.apply(_key("b", 1), _value("b", 1, 10))  # the same schema under a second subject: the same id
    s.apply(_key("a", 1), _value("a", 1, 10, deleted=True))
    entry = s.by_id(10)
    assert entry is not None and (entry.subject, entry.deleted) == ("a", True)  # still served
    s.apply(_key("a", 1), None)  # hard delete of a-1: b-1 still holds the id
    entry = s.by_id(10)
    assert entry is not None and entry.subject == "b"
    s.apply(_key("b", 1), None)
    assert s.by_id(10) is None


def test_delete_subject_marks_versions_and_clear_subject_drops_them() -> None:
    s = SchemaStore()
    for v in (1, 2, 3):
        s.apply(_key("a", v), _value("a", v, 20 + v))
    s.apply(b'{"keytype":"DELETE_SUBJECT","subject":"a","magic":0}', b'{"subject":"a","version":2}')
    assert [s.schemas[("a", v)].deleted for v in (1, 2, 3)] == [True, True, False]
    assert s.by_id(21) is not None  # soft-deleted: still decodes its records
    s.apply(b'{"keytype":"CLEAR_SUBJECT","subject":"a","magic":0}', b'{"subject":"a"}')
    assert s.by_id(21) is None and s.by_id(22) is None and s.by_id(23) is not None


def test_contexts_keep_their_own_ids() -> None:
    s = SchemaStore()
    s.apply(_key("a", 1), _value("a", 1, 1))
    s.apply(_key(":.ctx:a", 1), json.dumps({"subject": ":.ctx:a", "version": 1, "id": 1, "schema": '"int"'}).encode())
    assert s.by_id(1).schema == '"string"' and s.by_id(1, ".ctx").schema == '"int"'
    assert split_subject(":.ctx:a") == (".ctx", "a") and split_subject("a") == (".", "a")
    assert split_subject(":.ctx:") == (".ctx", "")
    assert s.contexts_holding(1) == [".", ".ctx"]


def test_records_the_registry_skips_are_skipped_and_counted() -> None:
    s = SchemaStore()
    s.apply(b"not json", b"{}")
    s.apply(b'{"keytype":"WHAT"}', b"{}")
    s.apply(b'{"keytype":"NOOP","magic":0}', None)
    s.apply(b'{"keytype":"CONFIG","subject":null,"magic":0}', b'{"compatibilityLevel":"FULL"}')
    s.apply(_key("a", 1), b"not json")
    s.apply(json.dumps({"keytype": "SCHEMA", "subject": "a", "version": 1, "magic": 7}).encode(), _value("a", 1, 1))
    assert len(s) == 0 and s.skipped.total() == 4 and s.records == 6


def test_guid_is_the_md5_field_else_the_md5_of_the_schema() -> None:
    import base64
    import hashlib

    s = SchemaStore()
    s.apply(_key("a", 1), _value("a", 1, 1))
    s.apply(_key("b", 1), _value("b", 1, 2, md5=base64.b64encode(b"\x01" * 16).decode()))
    assert s.by_guid(hashlib.md5(b'"string"').digest()).id == 1
    assert s.by_guid(b"\x01" * 16).id == 2


def test_framings() -> None:
    framed, carrier = schema_ref(b"\x00\x00\x00\x01\x2cdata", (), "value")
    assert (framed.schema_id, framed.rest, framed.in_header) == (300, 5, False)
    header = b"\x01" + b"\xab" * 16 + b"\x00"
    framed, carrier = schema_ref(b"data", ((b"__value_schema_id", header),), "value")
    assert framed.guid == b"\xab" * 16 and framed.in_header and message_indexes(carrier, framed.rest) == ([0], 18)
    framed, _ = schema_ref(b"\x00\x00\x00\x00\x05", ((b"__value_schema_id", header),), "key")
    assert framed.schema_id == 5  # the key reads __key_schema_id only
    assert message_indexes(b"\x04\x02\x00", 0) == ([1, 0], 3)  # zigzag: count 2, indexes 1 and 0
    with pytest.raises(FramingError, match="count -1"):
        message_indexes(b"\x01", 0)
    with pytest.raises(FramingError, match="runs past the end"):
        message_indexes(b"\x04\x02", 0)


@pytest.mark.parametrize(
    "x,single,text",
    [(1.0, False, "1.0"), (1e10, False, "1.0E10"), (1.5e-5, False, "1.5E-5"), (0.001, False, "0.001"),
     (123456789.0, False, "1.23456789E8"), (1e7, False, "1.0E7"), (-0.0, False, "-0.0"),
     (struct.unpack(">f", struct.pack(">f", 0.1))[0], True, "0.1"),
     (struct.unpack(">f", struct.pack(">f", 3.3e-7))[0], True, "3.3E-7")],
)  # fmt: skip
def test_java_float_text(x: float, single: bool, text: str) -> None:
    pytest.importorskip("fastavro")
    from kseg.decoders.registry.avro import java_float_text

    assert java_float_text(x, single) == text


def test_a_partition_of_other_records_is_not_a_schemas_log(tmp_path) -> None:
    from kseg.decoders.registry.source import load
    from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment

    write_segment(tmp_path / "t-0", [[build_v2_batch([RecordSpec(b"k", b"v", 0)])]])
    with pytest.raises(InputError, match="not a _schemas log"):
        load(str(tmp_path / "t-0"))
    (tmp_path / "empty-0").mkdir()
    with pytest.raises(InputError, match="no .log segment"):
        load(str(tmp_path / "empty-0"))


def _ref_value(subject: str, sid: int, refs: list[tuple[str, str, int]], schema: str) -> bytes:
    references = [{"name": n, "subject": s, "version": v} for n, s, v in refs]
    value = {"subject": subject, "version": 1, "id": sid, "schema": schema, "references": references}
    return json.dumps(value).encode()


def test_reference_cycles_and_missing_references_are_reasons_not_crashes() -> None:
    pytest.importorskip("fastavro")
    from kseg.decoders.registry import Registry, RegistryDecoder

    s = SchemaStore()
    rec = '{"type":"record","name":"%s","fields":[]}'
    s.apply(_key("a", 1), _ref_value("a", 1, [("B", "b", 1)], rec % "A"))
    s.apply(_key("b", 1), _ref_value("b", 2, [("A", "a", 1)], rec % "B"))
    s.apply(_key("c", 1), _ref_value("c", 3, [("X", "x", 9)], rec % "C"))
    decoder = RegistryDecoder(Registry(s), "value")
    cycle = decoder.json_fields(b"\x00\x00\x00\x00\x01", ())
    assert cycle["payloadDecodeError"].endswith("reference cycle through a version 1"), cycle
    missing = decoder.json_fields(b"\x00\x00\x00\x00\x03", ())
    assert "reference 'X' -> x version 9 is not in _schemas" in missing["payloadDecodeError"], missing
    again = decoder.json_fields(b"\x00\x00\x00\x00\x03", ())  # parsed once: the same reason from the cache
    assert again == missing and decoder.registry.failures.total() == 3
    assert decoder.registry.notes()[0].startswith("2 payloads printed as hex: schema id 3 (AVRO) does not parse: ")
