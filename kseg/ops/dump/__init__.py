"""``kseg dump``: DumpLogSegments's walk over a segment and its indexes."""
