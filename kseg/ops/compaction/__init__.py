"""``kseg compaction``: tombstones and control batches still in a log, against the cleaner's delete rules."""
