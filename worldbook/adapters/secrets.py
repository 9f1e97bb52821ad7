"""Sealing secrets at rest (ADR 0017): connections' upstream API keys, with Fernet
(AES-128-CBC + HMAC-SHA256, ``cryptography``) under a key derived from the operator's
``WORLDBOOK_SECRET_KEY``.

The operator's value may be any string: the Fernet key is its SHA-256, URL-safe base64
encoded. A sealed value that does not open (the secret key changed) is an error that says so,
never a silent empty key.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from worldbook.errors import InvalidInput, ServiceUnavailable


class Sealer:
    """Seals and opens short secrets with one server key."""

    def __init__(self, secret_key: str | None) -> None:
        self._fernet: Fernet | None = None
        if secret_key:
            digest = hashlib.sha256(secret_key.encode()).digest()
            self._fernet = Fernet(base64.urlsafe_b64encode(digest))

    @property
    def ready(self) -> bool:
        return self._fernet is not None

    def seal(self, plaintext: str) -> str:
        if self._fernet is None:
            raise InvalidInput(
                "This server cannot store upstream keys: its operator has not set "
                "WORLDBOOK_SECRET_KEY. Set it (any long random string) or leave upstream_key "
                "out.",
                field="upstream_key",
            )
        return self._fernet.encrypt(plaintext.encode()).decode()

    def open(self, sealed: str) -> str:
        if self._fernet is None:
            raise ServiceUnavailable(
                "This connection's upstream key cannot be read: WORLDBOOK_SECRET_KEY is not "
                "set on this server."
            )
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise ServiceUnavailable(
                "This connection's upstream key no longer opens (WORLDBOOK_SECRET_KEY "
                "changed); rotate the connection's upstream key."
            ) from None
