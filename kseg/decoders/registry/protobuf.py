"""Protobuf payloads, decoded from the registry's ``.proto`` text compiled at run time.

The schema and every schema it references (by import path: a reference's ``name``) are written to a
private temporary directory and compiled by ``grpc_tools.protoc`` (grpcio-tools, whose include
directory brings Google's well-known types) to a ``FileDescriptorSet``, loaded into a fresh
descriptor pool.  A schema stored as a base64 ``FileDescriptorProto`` (what confluent-kafka's
Python serializer sends; the registry stores it as ``.proto`` text) is read as such.  The message is
chosen by the payload's message-index path (``[0]`` the file's first message, ``[1, 0]`` the first
nested message of the second...).  The output is protobuf's JSON mapping as the registry's console
consumer prints it (``JsonFormat.printer().includingDefaultValueFields()``) with its
``preserve.json.field.name=true``: field names as written in the ``.proto``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import tempfile
from typing import Any

from kseg.decoders.registry.protobuf_bound import Bound, needs_bound


class ProtobufCodec:
    """One ``.proto`` schema (with its references), compiled once."""

    def __init__(self, schema_text: str, references: dict[str, str], file_name: str = "schema.proto") -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool  # kseg[schemas]

        fds = descriptor_pb2.FileDescriptorSet()
        as_descriptor = _descriptor(schema_text)
        if as_descriptor is not None:
            files = [_descriptor(text) or _compile({name: text}, name) for name, text in references.items()]
            sets = [f for f in files if isinstance(f, descriptor_pb2.FileDescriptorSet)]
            for s in sets:
                fds.file.extend(s.file)
            fds.file.extend(f for f in files if isinstance(f, descriptor_pb2.FileDescriptorProto))
            fds.file.append(as_descriptor)
            main = as_descriptor.name
        else:
            while file_name in references:
                file_name = "_" + file_name
            fds = _compile({**references, file_name: schema_text}, file_name)
            main = file_name
        self.pool = descriptor_pool.DescriptorPool()
        added: set[str] = set()
        for f in fds.file:
            if f.name not in added:
                self.pool.Add(f)
                added.add(f.name)
        self.file = self.pool.FindFileByName(main)
        proto = next(f for f in fds.file if f.name == main)
        prefix = f"{proto.package}." if proto.package else ""
        self._top = [self.pool.FindMessageTypeByName(prefix + m.name) for m in proto.message_type]
        self._classes: dict[tuple[int, ...], Any] = {}
        self._bounds: dict[tuple[int, ...], Any] = {}  # index path -> its Bound, or None: nothing to bound

    def message_class(self, indexes: list[int]) -> Any:
        key = tuple(indexes)
        cls = self._classes.get(key)
        if cls is None:
            from google.protobuf import message_factory

            desc = None
            scope = self._top
            for i in indexes:
                if i >= len(scope):
                    raise ValueError(f"message index path {list(indexes)} names no message of the schema")
                desc = scope[i]
                scope = list(desc.nested_types)
            cls = message_factory.GetMessageClass(desc)
            self._classes[key] = cls
            self._bounds[key] = Bound(desc) if needs_bound(desc) else None
        return cls

    def bound(self, data: bytes, indexes: list[int]) -> Any:
        """The message class of ``indexes``, after ``data``'s defaults are bounded (ValueError past the
        bound): checked before protobuf parses it, here or in typed export (:mod:`.protobuf_bound`)."""
        cls = self.message_class(indexes)
        bound = self._bounds[tuple(indexes)]
        if bound is not None:  # repeated messages: the defaults they would print, bounded first
            bound.check(data)
        return cls

    def top_index(self, name: str) -> int:
        """The index of the file's top-level message of simple name ``name`` (protobuf's
        ``FileDescriptor.findMessageTypeByName``, which Apicurio's deserializers ask)."""
        for i, desc in enumerate(self._top):
            if desc.name == name:
                return i
        known = ", ".join(d.name for d in self._top) or "none"
        raise ValueError(f"the payload names message {name!r}, not a top-level message of the schema ({known})")

    def message_named(self, name: str) -> Any:
        """The class of the schema's message ``name``: a full name (``shop.Parcel.Item``), or a name
        relative to the file's package (``Parcel.Item``, ``Receipt``); nested messages too."""
        from google.protobuf import message_factory

        found = {}
        scope = list(self._top)
        while scope:
            desc = scope.pop()
            found[desc.full_name] = desc
            scope.extend(desc.nested_types)
        package = self.file.package
        desc = found.get(name) or found.get(f"{package}.{name}" if package else name)
        if desc is None:
            known = ", ".join(sorted(found)) or "none"
            raise LookupError(f"no message {name} in the schema (its messages: {known})")
        return message_factory.GetMessageClass(desc)

    def decode(self, data: bytes, indexes: list[int]) -> tuple[str, str]:
        """(the JSON text, the message's full name)."""
        from google.protobuf import json_format

        cls = self.bound(data, indexes)
        msg = cls()
        msg.ParseFromString(data)
        obj = json_format.MessageToDict(
            msg, always_print_fields_with_no_presence=True, preserving_proto_field_name=True
        )
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")), msg.DESCRIPTOR.full_name


def _descriptor(text: str) -> Any:
    """A base64 ``FileDescriptorProto``, or None when ``text`` is ``.proto`` source."""
    from google.protobuf import descriptor_pb2

    stripped = text.strip()
    if not stripped or any(c in stripped for c in " \n;{"):
        return None
    try:
        raw = base64.b64decode(stripped, validate=True)
        fdp = descriptor_pb2.FileDescriptorProto()
        fdp.ParseFromString(raw)
    except (binascii.Error, ValueError, Exception):  # noqa: BLE001 - protobuf's DecodeError among them
        return None
    return fdp if fdp.name else None


def _compile(files: dict[str, str], main: str) -> Any:
    """``protoc --include_imports --descriptor_set_out`` over ``files`` (import path -> text)."""
    import importlib.resources

    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc  # kseg[schemas]

    include = str(importlib.resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory(prefix="kseg-proto-") as tmp:
        for name, text in files.items():
            path = os.path.normpath(os.path.join(tmp, name))
            if not path.startswith(tmp + os.sep):
                raise ValueError(f"reference name {name!r} leaves the schema directory")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(tmp, "set.pb")
        errors = os.path.join(tmp, "errors.txt")
        fd = os.open(errors, os.O_WRONLY | os.O_CREAT, 0o600)
        saved = os.dup(2)
        try:
            os.dup2(fd, 2)  # protoc reports to stderr: kept for the reason
            code = protoc.main(
                ["protoc", f"-I{tmp}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}", main]
            )
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(fd)
        if code != 0:
            with open(errors, encoding="utf-8", errors="replace") as f:
                lines = [ln.strip() for ln in f if ln.strip()]
            reason = lines[0] if lines else f"protoc exited {code}"
            raise ValueError(f"the .proto does not compile: {reason.replace(tmp + os.sep, '')}")
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds
