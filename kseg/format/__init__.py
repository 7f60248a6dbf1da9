"""The pure format layer: bytes in, typed values out.

Nothing here opens a file.  Functions take a buffer (``bytes``, ``bytearray``
or ``memoryview``) and a position in it, and raise :mod:`kseg.errors` with
positions relative to that buffer.  Each module names the Kafka class whose
layout it mirrors.
"""
