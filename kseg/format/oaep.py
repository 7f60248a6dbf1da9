"""RSA-OAEP with SHA3-512 (RFC 8017, section 7.1), the padding Aiven's tiered-storage plugin wraps data keys with.

``RsaEncryptionProvider`` (github:Aiven-Open/tiered-storage-for-apache-kafka, ``core/src/main/java/io/
aiven/kafka/tieredstorage/security/RsaEncryptionProvider.java``) asks BouncyCastle for
``RSA/NONE/OAEPWithSHA3-512AndMGF1Padding``: OAEP whose label hash and MGF1 hash are both SHA3-512, with
an empty label.  OpenSSL through ``cryptography`` offers OAEP only with SHA-1 and SHA-2, so the encoding
is written here over the RSA numbers (``n``, ``e`` or ``d``); ``hashlib`` has SHA3-512.
"""

from __future__ import annotations

import hashlib
import os

H_LEN = 64  # SHA3-512


class OaepError(ValueError):
    """A block that is no OAEP encoding under this key (a wrong key, or a corrupt wrapped key)."""


def _hash(data: bytes) -> bytes:
    return hashlib.sha3_512(data).digest()


def _mgf1(seed: bytes, length: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += _hash(seed + counter.to_bytes(4, "big"))
        counter += 1
    return bytes(out[:length])


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def _modulus_bytes(n: int) -> int:
    return (n.bit_length() + 7) // 8


def encrypt(message: bytes, n: int, e: int) -> bytes:
    """RSAES-OAEP-ENCRYPT (RFC 8017 7.1.1) with SHA3-512 and an empty label."""
    k = _modulus_bytes(n)
    if len(message) > k - 2 * H_LEN - 2:
        raise OaepError(f"message of {len(message)} bytes too long for a {k}-byte modulus")
    db = _hash(b"") + bytes(k - len(message) - 2 * H_LEN - 2) + b"\x01" + message
    seed = os.urandom(H_LEN)
    masked_db = _xor(db, _mgf1(seed, k - H_LEN - 1))
    masked_seed = _xor(seed, _mgf1(masked_db, H_LEN))
    em = b"\x00" + masked_seed + masked_db
    return pow(int.from_bytes(em, "big"), e, n).to_bytes(k, "big")


def rsadp(c: int, p: int, q: int, dp: int, dq: int, q_inv: int) -> int:
    """RSADP with the Chinese remainder theorem (RFC 8017 5.1.2, the private key's second form)."""
    m1, m2 = pow(c, dp, p), pow(c, dq, q)
    return m2 + (q_inv * (m1 - m2) % p) * q


def decrypt(ciphertext: bytes, n: int, private: tuple[int, int, int, int, int]) -> bytes:
    """RSAES-OAEP-DECRYPT (RFC 8017 7.1.2) with SHA3-512 and an empty label, ``private`` the key's
    ``(p, q, dP, dQ, qInv)``; :class:`OaepError` on any fault."""
    k = _modulus_bytes(n)
    if k < 2 * H_LEN + 2:  # RFC 8017 7.1.2 step 1c: no OAEP block with a 64-byte hash fits
        raise OaepError(
            f"a {k * 8}-bit RSA key is too small for OAEP with SHA3-512 (at least {(2 * H_LEN + 2) * 8} bits)"
        )
    if len(ciphertext) != k:
        raise OaepError(f"wrapped key of {len(ciphertext)} bytes, expected {k} (the modulus size)")
    c = int.from_bytes(ciphertext, "big")
    if c >= n:
        raise OaepError("wrapped key out of range for this modulus")
    em = rsadp(c, *private).to_bytes(k, "big")
    masked_seed, masked_db = em[1 : 1 + H_LEN], em[1 + H_LEN :]
    seed = _xor(masked_seed, _mgf1(masked_db, H_LEN))
    db = _xor(masked_db, _mgf1(seed, k - H_LEN - 1))
    rest = db[H_LEN:].lstrip(b"\x00")
    if em[0] != 0 or db[:H_LEN] != _hash(b"") or not rest.startswith(b"\x01"):
        raise OaepError("not an OAEP (SHA3-512) block under this key")
    return rest[1:]
