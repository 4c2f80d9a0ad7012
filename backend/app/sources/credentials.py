"""Passwords of sources: a `Secret` that never shows itself, and a `Keyring` that seals it at
rest with AES-GCM under a key derived (HKDF-SHA256) from the app's SECRET_KEY.

A sealed value reads `v1:<key id>:<base64 of nonce + ciphertext>`. The key id (a hash of the
derived key, not the key) names which secret sealed it, so that after SECRET_KEY changes the
earlier keys (SOURCES_PREVIOUS_SECRET_KEYS) can still open old values until
`workbench admin reencrypt-sources` seals them all again with the current one. Each value is
bound to its source's id (the associated data): a sealed password copied onto another
source's row does not open.
"""

from __future__ import annotations

import base64
import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "v1"
_INFO = b"workbench data source credentials v1"
_NONCE_BYTES = 12
MASK = "***"


class Secret:
    """A password in memory: `reveal()` gives it; repr() and str() never do."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK!r})" if self._value else "Secret('')"

    __str__ = __repr__


class CannotDecrypt(Exception):
    """A sealed value no known key opens (SECRET_KEY changed without keeping the old one)."""


def _derive(secret_key: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO)
    return hkdf.derive(secret_key.encode())


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"workbench key id\0" + key).hexdigest()[:12]


class Keyring:
    """Seals with the current secret key's derived key; opens with it or an earlier one."""

    def __init__(self, current_secret: str, previous_secrets: list[str] | None = None):
        current = _derive(current_secret)
        self.current_id = _key_id(current)
        self._keys = {self.current_id: current}
        for secret in previous_secrets or []:
            key = _derive(secret)
            self._keys.setdefault(_key_id(key), key)

    def __repr__(self) -> str:
        return f"Keyring(current={self.current_id}, keys={len(self._keys)})"

    def seal(self, secret: Secret, bound_to: str) -> str:
        """`secret` encrypted with the current key, bound to `bound_to` (the source's id)."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = AESGCM(self._keys[self.current_id]).encrypt(
            nonce, secret.reveal().encode(), bound_to.encode()
        )
        payload = base64.b64encode(nonce + sealed).decode()
        return f"{VERSION}:{self.current_id}:{payload}"

    def open(self, sealed: str, bound_to: str) -> Secret:
        """The secret `seal` made, with whichever known key sealed it.

        Raises:
            CannotDecrypt: unknown format or key, or the value was tampered with or moved.
        """
        version, key_id, payload = [*sealed.split(":", 2), "", ""][:3]
        key = self._keys.get(key_id)
        if version != VERSION or key is None:
            raise CannotDecrypt(
                "the stored password was encrypted with a secret key this server does not "
                "have (SECRET_KEY changed: list the old one in SOURCES_PREVIOUS_SECRET_KEYS, "
                "or enter the password again)"
            )
        try:
            raw = base64.b64decode(payload, validate=True)
            plain = AESGCM(key).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], bound_to.encode())
        except (InvalidTag, ValueError):
            raise CannotDecrypt("the stored password is damaged; enter it again") from None
        return Secret(plain.decode())

    def is_current(self, sealed: str) -> bool:
        """Whether `sealed` is already sealed with the current key."""
        return sealed.startswith(f"{VERSION}:{self.current_id}:")
