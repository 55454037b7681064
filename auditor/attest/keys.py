"""Ed25519 key pairs for attestations: generated, written, loaded (PEM).

The private key is PKCS#8 PEM (unencrypted), the public key SubjectPublicKeyInfo PEM,
the formats ``openssl genpkey -algorithm ed25519`` and ``openssl pkey -pubout`` write.
A key's id (an envelope's ``keyid``) is the SHA-256, in hex, of the public key's DER
SubjectPublicKeyInfo: ``openssl pkey -pubin -in KEY.pub -outform DER | sha256sum``.

``cryptography`` is imported here, inside the functions, so that an audit without
``--attest`` never loads it.  A key that cannot be read or is not an Ed25519 key of
the expected kind is a :class:`~auditor.errors.UsageError` (exit 2).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.errors import UsageError

PRIVATE_SUFFIX, PUBLIC_SUFFIX = ".key", ".pub"
_MAX_KEY_BYTES = 64 * 1024  # a PEM key is a few hundred bytes; never read a huge file whole


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key and the id of its public key."""

    private: Any  # cryptography's Ed25519PrivateKey
    keyid: str

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


@dataclass(frozen=True)
class VerifyingKey:
    """An Ed25519 public key and its id."""

    public: Any  # cryptography's Ed25519PublicKey
    keyid: str

    def verify(self, signature: bytes, message: bytes) -> bool:
        """Whether ``signature`` is this key's over ``message``."""
        from cryptography.exceptions import InvalidSignature

        try:
            self.public.verify(signature, message)
        except InvalidSignature:
            return False
        return True


def keyid_of(public: Any) -> str:
    """SHA-256 (hex) of the public key's DER SubjectPublicKeyInfo."""
    from cryptography.hazmat.primitives import serialization

    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def generate() -> tuple[bytes, bytes]:
    """A fresh key pair: (private PKCS#8 PEM, public SubjectPublicKeyInfo PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private_pem, public_pem


def write_key_pair(prefix: str) -> tuple[str, str, str]:
    """Write a fresh pair to ``PREFIX.key`` (mode 0600) and ``PREFIX.pub``; (private path, public path, keyid).

    Neither file may exist already (a key is never overwritten).  Each is written through
    :func:`~auditor.files.atomic.atomic_write`: a temporary file created 0600 beside it, never
    through a link, then renamed, so the private key is never readable by others, not even briefly.
    """
    from auditor.files.atomic import atomic_write, new_file_mode

    private_path, public_path = prefix + PRIVATE_SUFFIX, prefix + PUBLIC_SUFFIX
    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise UsageError(f"{path} exists; a key is never overwritten (remove it, or choose another --out)")
    private_pem, public_pem = generate()
    try:
        atomic_write(private_path, private_pem.decode("ascii"), mode=0o600)
        atomic_write(public_path, public_pem.decode("ascii"), mode=new_file_mode())
    except OSError as exc:
        raise UsageError(f"cannot write the key pair {prefix}{{{PRIVATE_SUFFIX},{PUBLIC_SUFFIX}}}: {exc}") from None
    return private_path, public_path, load_verifying_key(public_path).keyid


def _read(path: str | Path, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_KEY_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None
    if len(data) > _MAX_KEY_BYTES:
        raise UsageError(f"{path} is not a PEM key (over {_MAX_KEY_BYTES} bytes)")
    return data


def load_signing_key(path: str | Path) -> SigningKey:
    """The Ed25519 private key in ``path`` (PKCS#8 PEM, unencrypted)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = _read(path, "signing key")
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise UsageError(f"{path} is an encrypted key; give an unencrypted PKCS#8 PEM Ed25519 key") from None
    except (ValueError, UnsupportedAlgorithm):
        hint = " (that is a public key: --attest needs the private one)" if b"PUBLIC KEY" in data else ""
        raise UsageError(f"{path} is not a PKCS#8 PEM private key{hint}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise UsageError(f"{path} is not an Ed25519 key (auditor keygen writes one)")
    return SigningKey(private, keyid_of(private.public_key()))


def load_verifying_key(path: str | Path) -> VerifyingKey:
    """The Ed25519 public key in ``path`` (SubjectPublicKeyInfo PEM)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = _read(path, "public key")
    try:
        public = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        hint = " (that is a private key: give the public one, PREFIX.pub)" if b"PRIVATE KEY" in data else ""
        raise UsageError(f"{path} is not a SubjectPublicKeyInfo PEM public key{hint}") from None
    if not isinstance(public, Ed25519PublicKey):
        raise UsageError(f"{path} is not an Ed25519 public key")
    return VerifyingKey(public, keyid_of(public))
