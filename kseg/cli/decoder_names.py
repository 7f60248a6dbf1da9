"""The names of key and value decoders (``--key-decoder``/``--value-decoder``, Kafka's
``--key-decoder-class``/``--value-decoder-class``) and the KRaft control records' text, without click: the
lookups' plain command lines (:mod:`kseg.cli.lookup_plain`) use them too.  :mod:`kseg.cli.params` turns
their errors into click's usage errors."""

from __future__ import annotations

from typing import Callable

Decoder = Callable[[bytes], str]

_STRING = ("string", "org.apache.kafka.tools.api.StringDecoder", "kafka.serializer.StringDecoder")


def resolve_decoder(name: str) -> Decoder:
    """``string`` (Kafka's default), ``hex``, ``base64``, ``json``, ``int``, ``long``, a Kafka decoder
    class name (:data:`kseg.decoders.simple.JAVA_DECODERS`) or ``module:function``."""
    if name in _STRING:
        from kseg.format.strings import string_decoder

        return string_decoder
    if name == REGISTRY:
        from kseg.errors import UsageError

        raise UsageError(
            "the registry decoder is for dump, lookup-offset, lookup-time, export and grep (docs/schemas.md)"
        )
    from kseg.decoders.simple import resolve

    return resolve(name)


REGISTRY = "registry"


def kraft_text(type_id: int, key: bytes, value: bytes | None) -> str | None:
    """The KRaft control records' text (``kseg.decoders.control``), imported on the first one."""
    from kseg.decoders.control import control_record_text

    return control_record_text(type_id, key, value)
