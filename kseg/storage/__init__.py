"""The storage layer: files, the streaming segment reader, indexes, lookups and verification.

It reads files (read-only) and calls :mod:`kseg.format` for every byte layout.
"""
