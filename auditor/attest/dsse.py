"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1.0).

The signature covers the pre-authentication encoding (:func:`pae`) of the payload type
and the payload bytes, never the JSON of the envelope, so neither can be swapped or
re-encoded without breaking it.  The payload is carried base64-encoded (standard
alphabet, with padding); a signature's ``keyid`` is the SHA-256 of the signer's public
key (:func:`auditor.attest.keys.keyid_of`).
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from auditor.attest.keys import SigningKey, VerifyingKey

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``, lengths as ASCII decimal byte counts."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


class Signature(BaseModel):
    """One signature of an envelope."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keyid: str = Field("", description="SHA-256 (hex) of the signer's DER SubjectPublicKeyInfo.")
    sig: str = Field(description="Base64 of the Ed25519 signature over PAE(payloadType, payload).")


class Envelope(BaseModel):
    """A DSSE envelope: the payload (base64), its type and its signatures."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    payload: str
    payloadType: str  # noqa: N815 - DSSE's own spelling
    signatures: list[Signature] = Field(min_length=1)

    def line(self) -> str:
        """The envelope as one compact JSON line (no newline)."""
        return self.model_dump_json()


class Rejected(Exception):
    """An envelope that does not verify; ``kind`` says how (the verifier's message names it)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def sign(payload: bytes, key: SigningKey, payload_type: str = PAYLOAD_TYPE) -> Envelope:
    """``payload`` in an envelope signed by ``key``."""
    signature = key.sign(pae(payload_type, payload))
    return Envelope(
        payload=base64.b64encode(payload).decode("ascii"),
        payloadType=payload_type,
        signatures=[Signature(keyid=key.keyid, sig=base64.b64encode(signature).decode("ascii"))],
    )


def _b64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise Rejected("malformed", f"the {what} is not standard base64") from None


def open_envelope(envelope: Envelope, key: VerifyingKey) -> bytes:
    """The payload bytes of ``envelope`` once a signature of ``key`` over its PAE checks out.

    Signatures that name another keyid are not tried (DSSE: an unknown keyid is not
    trusted); one with no keyid is tried against ``key``.  Raises :class:`Rejected`
    ("unknown key", "bad signature" or "malformed").
    """
    payload = _b64(envelope.payload, "payload")
    ours = [s for s in envelope.signatures if s.keyid in (key.keyid, "")]
    if not ours:
        named = ", ".join(sorted({s.keyid for s in envelope.signatures}))
        raise Rejected("unknown key", f"signed by keyid {named}, not by the key given (keyid {key.keyid})")
    message = pae(envelope.payloadType, payload)
    for signature in ours:
        if key.verify(_b64(signature.sig, "signature"), message):
            return payload
    raise Rejected("bad signature", f"the Ed25519 signature does not match the payload (keyid {key.keyid})")
