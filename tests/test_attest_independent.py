"""A signed statement checks out under DSSE and Ed25519 implemented here from their specifications.

Nothing of ``auditor.attest`` nor ``cryptography`` is used to check: the pre-authentication
encoding is written from the DSSE protocol (v1.0), the key is read from its PEM by hand
(RFC 8410's fixed SubjectPublicKeyInfo prefix), and Ed25519 verification is RFC 8032's
section 5.1.7, over Python integers (after the RFC's own reference code, section 6).
The implementation is itself checked against RFC 8032's test vector 1 and DSSE's PAE example.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from conftest import SEED_000

from auditor.cli import main

# -- Ed25519 (RFC 8032) -------------------------------------------------------------------------

p = 2**255 - 19
q = 2**252 + 27742317777372353535851937790883648493  # the group order L
d = -121665 * pow(121666, p - 2, p) % p
SQRT_M1 = pow(2, (p - 1) // 4, p)


def _recover_x(y: int, sign: int) -> int | None:
    if y >= p:
        return None
    x2 = (y * y - 1) * pow(d * y * y + 1, p - 2, p) % p
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (p + 3) // 8, p)
    if (x * x - x2) % p:
        x = x * SQRT_M1 % p
    if (x * x - x2) % p:
        return None
    if (x & 1) != sign:
        x = p - x
    return x


def _add(P: tuple, Q: tuple) -> tuple:  # extended homogeneous coordinates (X, Y, Z, T)
    A = (P[1] - P[0]) * (Q[1] - Q[0]) % p
    B = (P[1] + P[0]) * (Q[1] + Q[0]) % p
    C = 2 * P[3] * Q[3] * d % p
    D = 2 * P[2] * Q[2] % p
    E, F, G, H = B - A, D - C, D + C, B + A
    return (E * F % p, G * H % p, F * G % p, E * H % p)


def _mul(s: int, P: tuple) -> tuple:
    Q = (0, 1, 1, 0)  # the neutral element
    while s > 0:
        if s & 1:
            Q = _add(Q, P)
        P = _add(P, P)
        s >>= 1
    return Q


def _equal(P: tuple, Q: tuple) -> bool:
    return (P[0] * Q[2] - Q[0] * P[2]) % p == 0 and (P[1] * Q[2] - Q[1] * P[2]) % p == 0


def _decompress(s: bytes) -> tuple | None:
    if len(s) != 32:
        return None
    y = int.from_bytes(s, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    x = _recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % p)


_GY = 4 * pow(5, p - 2, p) % p
_G = (_recover_x(_GY, 0), _GY, 1, _recover_x(_GY, 0) * _GY % p)


def ed25519_verify(public: bytes, message: bytes, signature: bytes) -> bool:
    """RFC 8032 5.1.7: [S]B = R + [k]A' with k = SHA-512(R || A || M) mod L."""
    if len(public) != 32 or len(signature) != 64:
        return False
    A, R = _decompress(public), _decompress(signature[:32])
    if A is None or R is None:
        return False
    s = int.from_bytes(signature[32:], "little")
    if s >= q:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % q
    return _equal(_mul(s, _G), _add(R, _mul(k, A)))


# -- DSSE ---------------------------------------------------------------------------------------


def dsse_pae(payload_type: bytes, body: bytes) -> bytes:
    """DSSE v1.0: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN as ASCII decimal bytes."""
    return b" ".join([b"DSSEv1", str(len(payload_type)).encode(), payload_type, str(len(body)).encode(), body])


# RFC 8410: an Ed25519 SubjectPublicKeyInfo is this 12-byte DER prefix and the 32-byte key.
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def raw_public_key(pem: str) -> tuple[bytes, str]:
    """The 32-byte key of a PEM public key and its keyid (SHA-256 of the DER)."""
    lines = pem.strip().splitlines()
    assert lines[0] == "-----BEGIN PUBLIC KEY-----" and lines[-1] == "-----END PUBLIC KEY-----"
    der = base64.b64decode("".join(lines[1:-1]))
    assert der[:12] == SPKI_PREFIX and len(der) == 44
    return der[12:], hashlib.sha256(der).hexdigest()


def test_the_implementation_here_meets_the_specs_own_vectors() -> None:
    # RFC 8032 section 7.1, TEST 1 (an empty message).
    public = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    signature = bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )
    assert ed25519_verify(public, b"", signature)
    assert not ed25519_verify(public, b"x", signature)
    assert not ed25519_verify(public, b"", signature[:-1] + bytes([signature[-1] ^ 1]))
    # DSSE protocol.md's example.
    assert dsse_pae(b"http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_a_statement_verifies_with_dsse_and_ed25519_written_from_the_specs(tmp_path: Path) -> None:
    assert main(["keygen", "--out", str(tmp_path / "ci")]) == 0
    out = tmp_path / "v.intoto.jsonl"
    argv = ["audit", str(SEED_000), "--attest", str(tmp_path / "ci.key"), "--attest-output", str(out), "--quiet"]
    assert main(argv) == 0
    public, keyid = raw_public_key((tmp_path / "ci.pub").read_text())
    (line,) = out.read_text().splitlines()
    envelope = json.loads(line)
    assert set(envelope) == {"payload", "payloadType", "signatures"}
    (signature,) = envelope["signatures"]
    assert signature["keyid"] == keyid
    body = base64.b64decode(envelope["payload"], validate=True)  # standard base64, padded
    message = dsse_pae(envelope["payloadType"].encode(), body)
    sig = base64.b64decode(signature["sig"], validate=True)
    assert ed25519_verify(public, message, sig)
    # ... and only that message: another type or one more byte is refused.
    assert not ed25519_verify(public, dsse_pae(b"application/json", body), sig)
    assert not ed25519_verify(public, dsse_pae(envelope["payloadType"].encode(), body + b" "), sig)
    statement = json.loads(body)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0]["digest"]["sha256"] == hashlib.sha256(SEED_000.read_bytes()).hexdigest()
