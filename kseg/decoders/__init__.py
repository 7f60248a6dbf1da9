"""Decoders for Kafka's internal topics and record keys/values (``kseg dump`` options).

Importing this package is cheap: it loads no schema and no decoder module.
Use :func:`parser_for` to get a topic parser by name; each parser loads its
schema files on first use.

* ``offsets`` (``--offsets-decoder``): :class:`kseg.decoders.coordinator.OffsetsMessageParser`
  (Kafka 3.7 and before: :class:`kseg.decoders.offsets_legacy.LegacyOffsetsMessageParser`)
* ``transaction-log`` (``--transaction-log-decoder``): :class:`kseg.decoders.txnlog.TransactionLogMessageParser`
* ``cluster-metadata`` (``--cluster-metadata-decoder``):
  :class:`kseg.decoders.metadata.ClusterMetadataLogMessageParser`
* ``remote-log-metadata`` (``--remote-log-metadata-decoder``):
  :class:`kseg.decoders.remote.RemoteMetadataLogMessageParser`
* ``share-group-state`` (``--share-group-state-decoder``):
  :class:`kseg.decoders.coordinator.ShareGroupStateMessageParser`

KRaft control records: :func:`kseg.decoders.control.control_record_text`.
Key/value decoders (``--key-decoder``/``--value-decoder``): :mod:`kseg.decoders.simple`.
"""

from __future__ import annotations

from importlib import import_module

#: decoder name -> (module, class)
PARSERS: dict[str, tuple[str, str]] = {
    "offsets": ("kseg.decoders.coordinator", "OffsetsMessageParser"),
    "transaction-log": ("kseg.decoders.txnlog", "TransactionLogMessageParser"),
    "cluster-metadata": ("kseg.decoders.metadata", "ClusterMetadataLogMessageParser"),
    "remote-log-metadata": ("kseg.decoders.remote", "RemoteMetadataLogMessageParser"),
    "share-group-state": ("kseg.decoders.coordinator", "ShareGroupStateMessageParser"),
}


def parser_for(name: str, release=None):
    """A new parser for decoder ``name`` (a key of :data:`PARSERS`) as Kafka ``release``'s tool
    (a :class:`kseg.format.releases.Release`; None: the newest) prints it."""
    try:
        module, cls = PARSERS[name]
    except KeyError:
        from kseg.errors import UsageError

        raise UsageError(f"unknown topic decoder {name!r}", hint="one of " + ", ".join(PARSERS)) from None
    if release is None:
        from kseg.format.releases import LATEST

        release = LATEST
    if name == "offsets" and release.legacy_offsets_text:
        module, cls = "kseg.decoders.offsets_legacy", "LegacyOffsetsMessageParser"  # Kafka 3.0-3.7
    return getattr(import_module(module), cls)(release)
