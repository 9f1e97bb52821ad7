"""Proxy connections of the in-memory store (ADR 0017), with the SQL store's rules."""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass, replace

from worldbook.core.api_keys import hash_secret
from worldbook.core.connections import (
    ConnectionRecord,
    ConnectionSpec,
    connection_token_prefix,
    new_connection_token,
)
from worldbook.core.records import now
from worldbook.core.store_rules import check_user_id, new_id
from worldbook.errors import NotFound


@dataclass
class _Stored:
    record: ConnectionRecord
    digest: str
    sealed_key: str | None


class ConnectionTable:
    """Connections by id; tokens kept only as their sha256."""

    _lock: threading.RLock

    def __init__(self) -> None:
        super().__init__()
        self._connections: dict[str, _Stored] = {}

    def create_connection(
        self, owner_id: str, spec: ConnectionSpec, sealed_key: str | None
    ) -> tuple[ConnectionRecord, str]:
        check_user_id(owner_id)
        plaintext, prefix = new_connection_token()
        record = ConnectionRecord(
            new_id(), owner_id, prefix, spec, sealed_key is not None, created_at=now()
        )
        with self._lock:
            self._connections[record.id] = _Stored(record, hash_secret(plaintext), sealed_key)
        return record, plaintext

    def authenticate_connection(self, plaintext: str) -> tuple[ConnectionRecord, str | None] | None:
        if connection_token_prefix(plaintext) is None:
            return None
        digest = hash_secret(plaintext)
        with self._lock:
            for stored in self._connections.values():
                if hmac.compare_digest(stored.digest, digest):
                    if stored.record.revoked_at is not None:
                        return None
                    return stored.record, stored.sealed_key
        return None

    def list_connections(self, owner_id: str) -> list[ConnectionRecord]:
        with self._lock:
            found = [s.record for s in self._connections.values() if s.record.owner_id == owner_id]
        return sorted(found, key=lambda r: (r.created_at, r.id))

    def rotate_connection(self, owner_id: str, connection_id: str) -> tuple[ConnectionRecord, str]:
        with self._lock:
            stored = self._owned(owner_id, connection_id)
            if stored.record.revoked_at is not None:
                raise _missing(connection_id)
            plaintext, prefix = new_connection_token()
            stored.record = replace(stored.record, prefix=prefix)
            stored.digest = hash_secret(plaintext)
            return stored.record, plaintext

    def revoke_connection(self, owner_id: str, connection_id: str) -> ConnectionRecord:
        with self._lock:
            stored = self._owned(owner_id, connection_id)
            if stored.record.revoked_at is None:
                stored.record = replace(stored.record, revoked_at=now())
            return stored.record

    def _owned(self, owner_id: str, connection_id: str) -> _Stored:
        stored = self._connections.get(connection_id)
        if stored is None or stored.record.owner_id != owner_id:
            raise _missing(connection_id)
        return stored


def _missing(connection_id: str) -> NotFound:
    return NotFound(
        "No connection with this id; list yours with GET /v1/connections.", field="connection_id"
    )
