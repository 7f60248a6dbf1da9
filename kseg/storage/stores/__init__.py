"""Where bytes come from: one :class:`~kseg.storage.context.Store` per input root, chosen once by
:func:`kseg.storage.stores.discover.store_for` (local files, object stores through pyarrow, Aiven's
tiered layout as a store over either), and discovery (:mod:`kseg.storage.stores.find`): the paths given
listed through their stores into partitions and segments that hold them."""
