"""The private keys of ``--rsm-key``, read once where a command (or a DataFrame load) starts.

Each key file is read through the bounded reader (:mod:`kseg.storage.read`: a regular file of at most
:data:`KEY`'s bound, a FIFO refused, never opened blocking) into the read context's
:class:`~kseg.storage.context.RsmKeys`: a key file that cannot be read is an :class:`InputError` naming it,
before any segment is read or any task starts.
"""

from __future__ import annotations

from kseg.errors import InputError
from kseg.storage.context import RsmKeys
from kseg.storage.read import AuxFile, Kind

#: A PEM RSA private key of 16384 bits is about 12.5 KiB.
KEY = Kind("private key", 64 << 10, "a PEM RSA private key of 16384 bits is under 13 KiB")


def read_key(pair: str, key_file: str) -> bytes:
    """A ``--rsm-key`` file's bytes (see the module's text)."""
    try:
        return AuxFile.local(key_file, KEY).data()
    except InputError as exc:
        raise InputError(f"cannot read the private key of --rsm-key {pair}: {exc.message}", path=key_file) from None


def read_keys(keys: dict[str, str]) -> RsmKeys:
    """The PEM bytes of each key file (key pair id -> file), read here."""
    return RsmKeys(tuple((pair, key_file, read_key(pair, key_file)) for pair, key_file in keys.items()))
