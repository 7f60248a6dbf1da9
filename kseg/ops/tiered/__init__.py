"""``kseg tiered``: the ``__remote_log_metadata`` topic folded into each partition's remote segments, and
those segments reconciled with the remote store and a local log (docs/tiered-metadata.md)."""
