"""``kseg grep --where``: the expression language read and tested on records (no CLI here; the CLI's tests
are in tests/cli/test_grep_where.py)."""

from __future__ import annotations

import json
import pickle
import re

import pytest

from kseg.format.strings import string_decoder
from kseg.ops.grep.where import WhereError, parse

ORDER = {
    "order_id": 1234,
    "customer": {"id": "C-1", "vip": True, "name": "Zoë"},
    "items": [{"sku": "A-1", "qty": 2}, {"sku": "B-7", "qty": 1}],
    "paid": False,
    "total": 12.5,
    "note": None,
    "odd key": "x",
}
HEADERS = ((b"trace", b"t-42"), (b"empty", None), (b"trace", b"second"))
DECODERS = (string_decoder, string_decoder)


def holds(text: str, value=ORDER, key: bytes | None = b"order-1234", flags: int = 0) -> bool:
    raw = None if value is None else (value if isinstance(value, bytes) else json.dumps(value).encode())
    return parse(text, flags).holds(7, 1_700_000_000_000, key, raw, HEADERS, DECODERS)


@pytest.mark.parametrize(
    "text",
    [
        "value.order_id == 1234",
        "value.customer.id == 'C-1'",
        'value.customer.name == "Zoë"',
        'value.items[1].sku == "B-7"',
        "value.items[-1].qty == 1",
        'value["odd key"] == "x"',
        "value.total > 12 and value.total <= 12.5",
        "value.order_id >= 1234 && value.order_id < 1235",
        'value.customer.id > "C-0"',
        "value.customer.vip",
        "not value.paid",
        "value.paid == false",
        "value.note == null",
        "not value.note",
        'value.items[0].sku =~ "^A-\\d$"',
        'value.customer =~ "\\"vip\\":true"',  # an object searched in its JSON text
        'value.order_id =~ "^12"',  # a number in its JSON text
        'value.customer.id !~ "^D"',
        'key == "order-1234"',
        'key =~ "1234$"',
        'headers.trace == "t-42"',  # the first header of the name
        'headers["trace"] =~ "^t-"',
        "headers.empty == null",
        "offset == 7 and timestamp >= 1700000000000",
        'value.order_id == 1 or value.customer.id == "C-1"',
        "(value.order_id == 1 or value.paid == false) and offset == 7",
        "value.items == value.items and value.items[0] != value.items[1]",  # arrays, objects: member by member
    ],
)
def test_conditions_that_hold(text: str) -> None:
    assert holds(text), text


@pytest.mark.parametrize(
    "text",
    [
        'value.order_id == "1234"',  # typed: a number is not a string
        "value.customer.vip == 1",  # true is not 1
        "value.missing == null",  # a path leading nowhere: false whatever the operator
        "value.missing != 1",
        "value.items[5].sku == 'A-1'",
        "value.items.sku == 'A-1'",  # a list has no field
        "value.customer.id < 5",  # a string and a number do not compare
        "value.paid",
        "value.note",
        "headers.absent == null",
        'headers.trace == "second"',
        'not value.customer.id == "C-1"',
        "value.order_id != 1234",
        'value.customer.name =~ "zoë"',  # case matters without -i
    ],
)
def test_conditions_that_do_not_hold(text: str) -> None:
    assert not holds(text), text


def test_values_that_are_not_json_are_text_and_null_is_null() -> None:
    assert holds('value == "not json {"', value=b"not json {")
    assert holds('value =~ "json"', value=b"not json {")
    assert not holds("value.a == 1", value=b"not json {")
    assert holds("value == 42", value=b"42")  # the text 42 read as JSON: a number
    assert holds("value == null", value=None)  # a tombstone
    assert holds("key == null", key=None)
    assert not holds("value", value=None)


def test_ignore_case_applies_to_the_regular_expressions() -> None:
    assert holds('value.customer.name =~ "zoë"', flags=re.IGNORECASE)


def test_a_condition_travels_to_worker_processes() -> None:
    """Pickled with the query (``--jobs``, ``--spark``)."""
    cond = parse('value.items[0].sku =~ "^A" and not headers.trace == "x"')
    assert pickle.loads(pickle.dumps(cond)) == cond


@pytest.mark.parametrize(
    ("text", "position", "said"),
    [
        ("value.order_id ==", 18, "expected a field"),
        ("value.x = 3", 9, "unexpected '='"),
        ("value.items[x] == 1", 13, "an index or a"),
        ('value =~ "("', 7, "not a regular expression"),
        ("value =~ 3", 7, "takes a regular expression in quotes"),
        ("offset.x == 1", 1, "offset is a number"),
        ("headers == 1", 1, "headers takes a header's name"),
        ('value.a == "open', 12, "without its closing"),
        ("value.a == 1 and", 17, "expected a field"),
        ("(value.a == 1", 14, "expected ')'"),
        ("1 == 1", 3, "one side wants a field"),
        ("3", 2, "expected a comparison"),
        ("price > 3", 1, "expected a field (value, key, headers, offset, timestamp)"),
        ("value.a == 1 value.b == 2", 14, "expected and, or, or the end"),
        ("value.", 7, "a field name after '.'"),
    ],
)
def test_what_does_not_parse_says_where(text: str, position: int, said: str) -> None:
    with pytest.raises(WhereError) as caught:
        parse(text)
    assert caught.value.position + 1 == position and said in caught.value.message, caught.value.message
