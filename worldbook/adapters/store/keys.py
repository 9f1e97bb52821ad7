"""Users and API keys (stored hashed: only the SHA-256 of a key is kept)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase, record_of
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core import limits
from worldbook.core.api_keys import api_key_prefix, hash_secret, new_api_key
from worldbook.core.records import ApiKeyRecord, now
from worldbook.core.store_rules import check_user_id, new_id
from worldbook.errors import ApiKeyNotFound


def _key_record(row: Mapping[Any, Any]) -> ApiKeyRecord:
    return record_of(ApiKeyRecord, row)


class KeysMixin(StoreBase):
    # --- users and API keys ----------------------------------------------------------------

    def ensure_user(self, user_id: str) -> None:
        """Create the user row if it does not exist (idempotent, race-free)."""
        check_user_id(user_id)
        with write_tx(self._engine) as conn:
            self._ensure_user(conn, user_id)

    def create_api_key(self, name: str) -> tuple[ApiKeyRecord, str]:
        """A new key; the plaintext is returned once and only its sha256 is stored."""
        limits.check_text(name, field="name", limit="API key name", max_len=200, blank_ok=False)
        plaintext, prefix = new_api_key()
        row = {
            "id": new_id(),
            "name": name,
            "secret_sha256": hash_secret(plaintext),
            "prefix": prefix,
            "created_at": now(),
            "revoked_at": None,
        }
        with write_tx(self._engine) as conn:
            conn.execute(sa.insert(t.api_keys).values(**row))
        return _key_record(row), plaintext

    def authenticate(self, plaintext: str) -> ApiKeyRecord | None:
        """The key record for a presented secret, or None (unknown or revoked)."""
        prefix = api_key_prefix(plaintext)
        if prefix is None:
            return None
        digest = hash_secret(plaintext)
        with read_tx(self._engine) as conn:
            rows = conn.execute(
                sa.select(t.api_keys).where(t.api_keys.c.prefix == prefix)
            ).mappings()
            found = None
            for row in rows:
                # Constant-time compare, so timing reveals nothing about stored hashes.
                if hmac.compare_digest(row["secret_sha256"], digest):
                    found = row
        if found is None or found["revoked_at"] is not None:
            return None
        return _key_record(found)

    def revoke_api_key(self, key_id: str) -> ApiKeyRecord:
        with write_tx(self._engine) as conn:
            conn.execute(
                sa.update(t.api_keys)
                .where(t.api_keys.c.id == key_id, t.api_keys.c.revoked_at.is_(None))
                .values(revoked_at=now())
            )
            row = conn.execute(sa.select(t.api_keys).where(t.api_keys.c.id == key_id)).mappings()
            found = row.first()
            if found is None:
                raise ApiKeyNotFound(f"API key {key_id!r} does not exist.", field="key_id")
            return _key_record(found)

    def list_api_keys(self) -> list[ApiKeyRecord]:
        with read_tx(self._engine) as conn:
            rows = conn.execute(sa.select(t.api_keys).order_by(t.api_keys.c.created_at))
            return [_key_record(r) for r in rows.mappings()]
