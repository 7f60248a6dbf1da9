"""``kseg grep --where``: a condition on a record's decoded fields, in a small language read here (no Python
``eval``): field paths, comparisons, regular expressions, ``and``/``or``/``not`` and parentheses.

Fields: ``value`` and ``key`` are the text the value and key decoders print (Kafka's string decoder by
default, ``json``, ``registry``: Avro, Protobuf and JSON Schema payloads as JSON), read as JSON when it is
JSON (else the text itself, a string), then walked by ``.name``, ``["any name"]`` and ``[index]``;
``headers.NAME`` (or ``headers["NAME"]``) is the first header NAME's value as UTF-8 text (null for a null
value); ``offset`` and ``timestamp`` are the record's.  A null key or a tombstone's value is null.

Comparisons are typed as JSON is: ``==``/``!=`` hold between values of one kind (``1234`` is not ``"1234"``,
``true`` not ``1``), ``<``/``<=``/``>``/``>=`` between two numbers or two strings; ``=~``/``!~`` search a
regular expression (a string) in a string, or in the JSON text of another value.  A path that leads
nowhere (no such field, an index past the end, a value that is not JSON) makes its comparison false,
whatever the operator; a path alone holds when it leads to a value that is neither null nor false (as in
jq).  ``not`` negates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable

from kseg.format.strings import decode_text, string_decoder

ROOTS = ("value", "key", "headers", "offset", "timestamp")
_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])
    | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    | (?P<op>==|!=|<=|>=|=~|!~|&&|\|\||[<>()\[\].!])
    | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
    )""",
    re.VERBOSE,
)
_ESCAPES = MappingProxyType({"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"})
_COMPARE = ("==", "!=", "<", "<=", ">", ">=", "=~", "!~")


class WhereError(ValueError):
    """An expression that does not parse: ``position`` is the character (0-based) where it goes wrong."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message, self.position = message, position


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # a path leading nowhere


# -- what a record offers ----------------------------------------------------------------------------------
class Fields:
    """A record's fields for one test, each decoded (and read as JSON) once, when asked for."""

    def __init__(
        self, offset: int, timestamp: int, key: Any, value: Any, headers: tuple, decoders: tuple[Callable, Callable]
    ) -> None:
        self.offset, self.timestamp, self.headers = offset, timestamp, headers
        self._raw = {"key": key, "value": value}
        self._decoders = {"key": decoders[0], "value": decoders[1]}
        self._docs: dict[str, Any] = {}

    def doc(self, root: str) -> Any:
        if root not in self._docs:
            raw = self._raw[root]
            self._docs[root] = None if raw is None else _as_json(decode_text(self._decoders[root], raw, self.headers))
        return self._docs[root]

    def header(self, name: str) -> Any:
        wanted = name.encode("utf-8", "surrogateescape")
        for k, v in self.headers:
            if k == wanted:
                return None if v is None else string_decoder(v)
        return MISSING


def _as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


# -- the expression ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Path:
    root: str
    steps: tuple[str | int, ...] = ()

    def get(self, f: Fields) -> Any:
        if self.root == "offset":
            return f.offset
        if self.root == "timestamp":
            return f.timestamp
        steps = self.steps
        if self.root == "headers":
            node, steps = f.header(str(steps[0])), steps[1:]
        else:
            node = f.doc(self.root)
        for step in steps:
            if isinstance(step, int) and isinstance(node, list) and -len(node) <= step < len(node):
                node = node[step]
            elif isinstance(step, str) and isinstance(node, dict) and step in node:
                node = node[step]
            else:
                return MISSING
        return node

    def holds(self, f: Fields) -> bool:
        value = self.get(f)
        return value is not MISSING and value is not None and value is not False


@dataclass(frozen=True)
class Const:
    value: Any

    def get(self, f: Fields) -> Any:
        return self.value


@dataclass(frozen=True)
class Compare:
    op: str
    left: Path | Const
    right: Path | Const
    pattern: re.Pattern[str] | None = None  # =~, !~

    def holds(self, f: Fields) -> bool:
        a = self.left.get(f)
        if a is MISSING:
            return False
        if self.pattern is not None:
            text = a if isinstance(a, str) else json.dumps(a, separators=(",", ":"), ensure_ascii=False)
            return (self.pattern.search(text) is not None) == (self.op == "=~")
        b = self.right.get(f)
        if b is MISSING:
            return False
        if self.op in ("==", "!="):
            return _equal(a, b) == (self.op == "==")
        if _kind(a) != _kind(b) or _kind(a) not in ("number", "string"):
            return False
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]


@dataclass(frozen=True)
class Not:
    part: Any

    def holds(self, f: Fields) -> bool:
        return not self.part.holds(f)


@dataclass(frozen=True)
class All:
    parts: tuple

    def holds(self, f: Fields) -> bool:
        return all(p.holds(f) for p in self.parts)


@dataclass(frozen=True)
class AnyOf:
    parts: tuple

    def holds(self, f: Fields) -> bool:
        return any(p.holds(f) for p in self.parts)


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _equal(a: Any, b: Any) -> bool:
    """JSON's equality: of one kind, arrays and objects member by member (Python's ``True == 1`` is not)."""
    kind = _kind(a)
    if kind != _kind(b):
        return False
    if kind == "array":
        return len(a) == len(b) and all(map(_equal, a, b))
    if kind == "object":
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@dataclass(frozen=True)
class Condition:
    """A parsed ``--where`` (its text kept for messages); :meth:`holds` tests a record."""

    text: str
    tree: Any

    def holds(
        self, offset: int, timestamp: int, key: Any, value: Any, headers: tuple, decoders: tuple[Callable, Callable]
    ) -> bool:
        return bool(self.tree.holds(Fields(offset, timestamp, key, value, headers, decoders)))


# -- reading it --------------------------------------------------------------------------------------------
def parse(text: str, flags: int = 0) -> Condition:
    """``text`` read as a condition; :class:`WhereError` saying where it goes wrong.  ``flags``: the regular
    expressions' (``re.IGNORECASE`` with ``-i``)."""
    return Condition(text, _Parser(text, flags).condition())


class _Parser:
    def __init__(self, text: str, flags: int) -> None:
        self.text, self.flags = text, flags
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                rest = text[pos:].strip()
                if rest:
                    at = len(text) - len(text[pos:].lstrip())
                    if rest[0] in "\"'":
                        raise WhereError(f"a string without its closing {rest[0]}", at)
                    raise WhereError(f"unexpected {rest[0]!r}", at)
                break
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i] if self.i < len(self.tokens) else ("end", "", len(self.text))

    def take(self) -> tuple[str, str, int]:
        token = self.peek()
        self.i += 1
        return token

    def fail(self, expected: str) -> WhereError:
        kind, text, pos = self.peek()
        return WhereError(f"expected {expected}, found {'the end' if kind == 'end' else repr(text)}", pos)

    def word(self, *words: str) -> bool:
        kind, text, _ = self.peek()
        if (kind == "name" and text in words) or (kind == "op" and text in words):
            self.i += 1
            return True
        return False

    def condition(self) -> Any:
        tree = self.either()
        if self.peek()[0] != "end":
            raise self.fail("and, or, or the end")
        return tree

    def either(self) -> Any:
        parts = [self.both()]
        while self.word("or", "||"):
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def both(self) -> Any:
        parts = [self.negated()]
        while self.word("and", "&&"):
            parts.append(self.negated())
        return parts[0] if len(parts) == 1 else All(tuple(parts))

    def negated(self) -> Any:
        if self.word("not", "!"):
            return Not(self.negated())
        if self.word("("):
            tree = self.either()
            if not self.word(")"):
                raise self.fail("')'")
            return tree
        return self.comparison()

    def comparison(self) -> Any:
        left = self.operand()
        kind, op, pos = self.peek()
        if kind != "op" or op not in _COMPARE:
            if isinstance(left, Const):
                raise self.fail("a comparison (==, !=, <, <=, >, >=, =~, !~)")
            return left
        self.i += 1
        right = self.operand()
        if isinstance(left, Const) and isinstance(right, Const):
            raise WhereError(f"{op} compares two values: one side wants a field", pos)
        if op in ("=~", "!~"):
            if not isinstance(right, Const) or not isinstance(right.value, str):
                raise WhereError(f"{op} takes a regular expression in quotes", pos)
            try:
                pattern = re.compile(right.value, self.flags)
            except re.error as exc:
                raise WhereError(f"{right.value!r} is not a regular expression: {exc}", pos) from None
            return Compare(op, left, right, pattern)
        return Compare(op, left, right)

    def operand(self) -> Path | Const:
        kind, text, pos = self.take()
        if kind == "num":
            return Const(float(text) if any(c in text for c in ".eE") else int(text))
        if kind == "str":
            return Const(_unquote(text))
        if kind == "name" and text in ("true", "false", "null"):
            return Const({"true": True, "false": False, "null": None}[text])
        if kind == "name" and text in ROOTS:
            return self.path(text, pos)
        self.i -= 1
        raise self.fail(f"a field ({', '.join(ROOTS)}) or a value")

    def path(self, root: str, pos: int) -> Path:
        steps: list[str | int] = []
        while True:
            if self.word("."):
                kind, text, _ = self.take()
                if kind != "name":
                    self.i -= 1
                    raise self.fail("a field name after '.'")
                steps.append(text)
            elif self.word("["):
                kind, text, _ = self.take()
                if kind == "str":
                    steps.append(_unquote(text))
                elif kind == "num" and text.lstrip("-").isdigit():
                    steps.append(int(text))
                else:
                    self.i -= 1
                    raise self.fail('an index or a "name" in brackets')
                if not self.word("]"):
                    raise self.fail("']'")
            else:
                break
        if root in ("offset", "timestamp") and steps:
            raise WhereError(f"{root} is a number: it has no fields", pos)
        if root == "headers" and (not steps or not isinstance(steps[0], str)):
            raise WhereError('headers takes a header\'s name: headers.NAME or headers["NAME"]', pos)
        return Path(root, tuple(steps))


def _unquote(token: str) -> str:
    """A quoted string's text: ``\\n``, ``\\t``, ``\\r``, ``\\\\`` and the quotes escaped; any other
    backslash kept (``"\\d+"`` is the regular expression ``\\d+``)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), token[1:-1], flags=re.DOTALL)
