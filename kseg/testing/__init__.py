"""Test-only helpers: a byte-exact Kafka log writer (see :mod:`kseg.testing.writer`).

Nothing in the CLI imports this package.
"""
