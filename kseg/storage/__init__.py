"""The storage layer: Kafka's on-disk nouns -- files and locations, the streaming record and batch
readers, partitions, atomic writes, the read policy, leader epochs, producer state and snapshots.

It reads files (read-only) and calls :mod:`kseg.format` for every byte layout; each command's
logic is in :mod:`kseg.ops`.
"""
