"""Each rule once (issue 21): a constant or a printed name has one definition, which the others import.

A pure-AST check over ``kseg/`` (the test writer ``kseg/testing`` aside: it takes Kafka's names as
arguments, as Kafka's own test builders do)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.test_layers import parsed

KSEG = Path(__file__).resolve().parent.parent / "kseg"


def sources() -> dict[str, ast.AST]:
    return {
        str(p.relative_to(KSEG.parent)): parsed(p.read_text())
        for p in sorted(KSEG.rglob("*.py"))
        if "testing" not in p.relative_to(KSEG).parts
    }


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


@functools.cache
def nodes() -> tuple[tuple[str, ast.AST], ...]:
    """Every node of every source with its file, docstrings aside: walked once a process (each test filters)."""
    found = []
    for name, tree in sources().items():
        skip = docstrings(tree)
        found.extend((name, node) for node in ast.walk(tree) if id(node) not in skip)
    return tuple(found)


def places(match) -> list[str]:
    """``file:line`` of every node ``match`` accepts, docstrings aside."""
    return sorted(f"{name}:{node.lineno}" for name, node in nodes() if match(node))


def shift(node, left: int, right: int) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.LShift)
        and isinstance(node.left, ast.Constant)
        and node.left.value == left
        and isinstance(node.right, ast.Constant)
        and node.right.value == right
    )


@pytest.mark.parametrize("name", ["CreateTime", "LogAppendTime", "NoTimestampType"])
def test_a_timestamp_type_is_named_once(name: str) -> None:
    """Kafka's ``TimestampType`` names: only in :mod:`kseg.format.timestamp_type`."""
    found = places(lambda n: isinstance(n, ast.Constant) and n.value == name)
    assert found == ["kseg/format/timestamp_type.py:11"]


#: Not the range: verify-index's sentinels below and past every offset, position and timestamp.


def test_the_64_bit_range_is_written_once() -> None:
    """``Long.MIN_VALUE``/``MAX_VALUE``: only in :mod:`kseg.limits`."""
    found = places(lambda n: shift(n, 1, 63))
    assert found == ["kseg/limits.py:34", "kseg/limits.py:34"]


def test_the_default_decompression_bound_is_derived_once() -> None:
    """No literal ``40 << 20``: :data:`kseg.limits.DEFAULT_DECOMPRESSION_LIMIT`."""
    assert places(lambda n: shift(n, 40, 20)) == []
