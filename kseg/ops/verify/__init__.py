"""``kseg verify-index``: each ``.index``/``.timeindex`` checked against one pass over its log."""
