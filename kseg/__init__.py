"""kseg: read Apache Kafka's on-disk log segments the way Kafka's own tools do.

Layers (each imports only the ones above it):

* :mod:`kseg.format`   pure format layer: bytes in, typed values out.
* :mod:`kseg.storage`  Kafka's on-disk nouns: files, records, batches, partitions, producer state.
* :mod:`kseg.ops`      one package per command (dump, verify, rebuild, txn, lookup, diff, ...).
* :mod:`kseg.render`   text (Kafka-compatible) and JSON Lines output.
* :mod:`kseg.decoders` Kafka message-schema decoders for internal topics.
* :mod:`kseg.spark`    the PySpark jobs.
* :mod:`kseg.cli`      the thin click layer.

``docs/architecture.md`` has the full table.
"""

__version__ = "0.1.0"
