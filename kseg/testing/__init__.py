"""A byte-exact Kafka log writer, a supported public API (``docs/testing-api.md``), like ``numpy.testing``.

Import from :mod:`kseg.testing.writer` (its ``__all__`` is the API).  The
``kseg`` command never imports this package (``tests/test_layers.py``).
"""
