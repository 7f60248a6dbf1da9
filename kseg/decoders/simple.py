"""Key and value decoders for ``--key-decoder`` / ``--value-decoder``.

Each decoder is a function ``bytes -> str`` whose result is printed after
``key: `` / `` payload: ``:

``string``  Kafka's default ``StringDecoder``: ``new String(bytes, UTF_8)``.
            Malformed UTF-8 becomes U+FFFD exactly as JDK 17 does it
            (:func:`kseg.decoders.jvm.java_utf8`); control characters,
            ``\\r``, ``\\n``, ``\\t`` pass through raw.
``hex``     lowercase hex digits, no separators (``"00ff41"``).
``base64``  standard base64 with padding (``"AP9B"``).
``int``     Kafka's ``IntegerDecoder`` (tools-api): the first 4 bytes as a big-endian
            signed int, in decimal; fewer than 4 bytes is Java's
            ``BufferUnderflowException`` (a :class:`DecoderError`).
``long``    Kafka's ``LongDecoder``: the same with the first 8 bytes.
``json``    the value as JSON, re-serialised compactly on one line: object
            member order, duplicate keys and the exact text of numbers are kept;
            strings are re-escaped the way Jackson writes them.  A value that
            is not valid JSON prints as ``string`` would, unchanged.

Any other name is a plugin ``module:function`` (``function`` may be a dotted
path inside the module): it is imported and called with the bytes; its result
is printed with ``str()`` (``None`` prints ``null``, like Java string
concatenation; ``bytes`` are decoded like ``string``).  A name that cannot be imported raises
:class:`kseg.errors.UsageError`; an exception inside the plugin is reported as
:class:`PluginDecoderError`.
"""

from __future__ import annotations

import base64 as _b64
import importlib
from typing import Callable

from kseg.errors import DecoderError, UsageError

Decoder = Callable[[bytes], str]


def string(data: bytes) -> str:
    """Kafka's ``StringDecoder``: ``new String(data, UTF_8)``."""
    from kseg.decoders.jvm import java_utf8

    return java_utf8(bytes(data))


def hex(data: bytes) -> str:  # noqa: A001 - the decoder's name on the command line
    """Lowercase hex, two digits per byte."""
    return bytes(data).hex()


def base64(data: bytes) -> str:
    """Standard base64 (RFC 4648 alphabet, ``=`` padding)."""
    return _b64.b64encode(bytes(data)).decode("ascii")


class _Raw(str):
    """A JSON number or literal, kept as its source text."""


def _compact(node, out: list) -> None:
    from kseg.decoders.jsonconv import quote

    if isinstance(node, _Raw):
        out.append(str.__str__(node))
    elif isinstance(node, str):
        out.append(quote(node))
    elif isinstance(node, list):
        out.append("[")
        for i, v in enumerate(node):
            if i:
                out.append(",")
            _compact(v, out)
        out.append("]")
    elif isinstance(node, _Object):
        out.append("{")
        for i, (k, v) in enumerate(node.pairs):
            if i:
                out.append(",")
            out.append(quote(k))
            out.append(":")
            _compact(v, out)
        out.append("}")
    elif node is True:
        out.append("true")
    elif node is False:
        out.append("false")
    else:
        out.append("null")


class _Object:
    __slots__ = ("pairs",)

    def __init__(self, pairs: list) -> None:
        self.pairs = pairs


def json(data: bytes) -> str:
    """The value as compact one-line JSON, or the ``string`` form when it is not JSON."""
    import json as _json

    text = string(data)
    try:
        node = _json.loads(text, object_pairs_hook=_Object, parse_float=_Raw, parse_int=_Raw, parse_constant=_Raw)
    except ValueError:
        return text
    out: list[str] = []
    _compact(node, out)
    return "".join(out)


def _fixed(size: int, data: bytes) -> str:
    if len(data) < size:
        raise DecoderError(f"java.nio.BufferUnderflowException: {len(data)} bytes, {size} needed")
    return str(int.from_bytes(bytes(data[:size]), "big", signed=True))


def int_(data: bytes) -> str:
    """Kafka's ``IntegerDecoder``: ``ByteBuffer.wrap(bytes).getInt()``."""
    return _fixed(4, data)


def long_(data: bytes) -> str:
    """Kafka's ``LongDecoder``: ``ByteBuffer.wrap(bytes).getLong()``."""
    return _fixed(8, data)


BUILTIN: dict[str, Decoder] = {"string": string, "hex": hex, "base64": base64, "json": json, "int": int_, "long": long_}

#: Kafka's decoder classes (``--key-decoder-class``/``--value-decoder-class``), by every name Kafka
#: accepts (tools-api since 3.8; ``kafka.serializer`` up to 3.9), -> kseg's decoder.  ``DefaultDecoder``
#: returns the bytes, which Kafka prints as the array's identity (``[B@1b6d3586``, different on
#: every run, no data in it): kseg prints them as ``hex``.
JAVA_DECODERS: dict[str, str] = {
    f"{package}.{cls}": name
    for package in ("org.apache.kafka.tools.api", "kafka.serializer")
    for cls, name in (
        ("StringDecoder", "string"),
        ("IntegerDecoder", "int"),
        ("LongDecoder", "long"),
        ("DefaultDecoder", "hex"),
    )
}


# Defined in kseg.errors with every other kseg exception; the historical name.
PluginDecoderError = DecoderError


def load_plugin(spec: str) -> Decoder:
    """Import ``module:function`` and wrap it as a decoder."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(
            f"unknown decoder {spec!r}",
            hint="use string, hex, base64, json, int, long, a Kafka decoder class "
            "(org.apache.kafka.tools.api.IntegerDecoder, ...) or a plugin as module:function",
        )
    try:
        obj = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or anything the module raises while importing
        raise UsageError(
            f"cannot import decoder module {module_name!r}: {exc}",
            hint="the module must be importable (on PYTHONPATH or installed)",
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"decoder {spec!r}: module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"decoder {spec!r} is not callable")
    func = obj

    def decode(data: bytes) -> str:
        try:
            result = func(bytes(data))
        except Exception as exc:
            raise PluginDecoderError(f"decoder {spec} failed: {type(exc).__name__}: {exc}") from exc
        if result is None:
            return "null"
        if isinstance(result, (bytes, bytearray, memoryview)):
            return string(bytes(result))
        return str(result)

    decode.__name__ = f"plugin:{spec}"
    return decode


def resolve(name: str) -> Decoder:
    """The decoder called ``name``: a built-in name or a plugin ``module:function``."""
    builtin = BUILTIN.get(JAVA_DECODERS.get(name, name))
    return builtin if builtin is not None else load_plugin(name)
