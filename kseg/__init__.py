"""kseg: read Apache Kafka's on-disk log segments the way Kafka's own tools do.

Layers (each imports only the ones above it):

* :mod:`kseg.format`   pure format layer: bytes in, typed values out.
* :mod:`kseg.storage`  files: streaming segment reader, indexes, lookups, verification.
* :mod:`kseg.render`   text (Kafka-compatible) and JSON Lines output.
* :mod:`kseg.cli`      the thin click layer.
* :mod:`kseg.decoders` Kafka message-schema decoders for internal topics.
"""

__version__ = "0.1.0"
