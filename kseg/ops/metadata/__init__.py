"""``kseg metadata``: the cluster metadata image a broker builds from ``__cluster_metadata-0``: the newest
snapshot and the log after it replayed one batch at a time, as Kafka's ``MetadataLoader`` feeds
``MetadataDelta``/``MetadataImage`` (docs/metadata.md).

``image`` holds the image and the delta's undo log, ``replay`` the records' effects (Kafka's ``*Delta``
classes) and the transaction states of ``MetadataBatchLoader``, ``read`` the snapshots and segments found and
where the replay starts and stops.
"""
