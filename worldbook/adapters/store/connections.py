"""Proxy connections (ADR 0017): tokens stored hashed, upstream keys stored sealed."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.api_keys import hash_secret
from worldbook.core.connections import (
    ConnectionRecord,
    ConnectionSpec,
    connection_token_prefix,
    new_connection_token,
    spec_from_json,
    spec_to_json,
)
from worldbook.core.records import now, utc
from worldbook.core.store_rules import check_user_id, new_id
from worldbook.errors import NotFound


def connection_record(row: Mapping[Any, Any]) -> ConnectionRecord:
    revoked = row["revoked_at"]
    return ConnectionRecord(
        id=row["id"],
        owner_id=row["owner_id"],
        prefix=row["prefix"],
        spec=spec_from_json(dict(row["spec"])),
        has_upstream_key=row["upstream_key"] is not None,
        created_at=_aware(row["created_at"]),
        revoked_at=_aware(revoked) if revoked is not None else None,
    )


def _aware(value: datetime) -> datetime:
    aware = utc(value)
    assert aware is not None
    return aware


def missing_connection(connection_id: str) -> NotFound:
    # Another user's connection answers as one that never existed.
    return NotFound(
        "No connection with this id; list yours with GET /v1/connections.", field="connection_id"
    )


class ConnectionsMixin(StoreBase):
    # --- proxy connections -----------------------------------------------------------------

    def create_connection(
        self, owner_id: str, spec: ConnectionSpec, sealed_key: str | None
    ) -> tuple[ConnectionRecord, str]:
        """A new connection; its token is returned once, only its sha256 is kept."""
        check_user_id(owner_id)
        plaintext, prefix = new_connection_token()
        row = {
            "id": new_id(),
            "owner_id": owner_id,
            "secret_sha256": hash_secret(plaintext),
            "prefix": prefix,
            "spec": spec_to_json(spec),
            "upstream_key": sealed_key,
            "created_at": now(),
            "revoked_at": None,
        }
        with write_tx(self._engine) as conn:
            self._ensure_user(conn, owner_id)
            conn.execute(sa.insert(t.connections).values(**row))
        return connection_record(row), plaintext

    def authenticate_connection(self, plaintext: str) -> tuple[ConnectionRecord, str | None] | None:
        """The live connection of a presented token and its sealed upstream key, or None."""
        prefix = connection_token_prefix(plaintext)
        if prefix is None:
            return None
        digest = hash_secret(plaintext)
        found = None
        with read_tx(self._engine) as conn:
            query = sa.select(t.connections).where(t.connections.c.prefix == prefix)
            for row in conn.execute(query).mappings():
                if hmac.compare_digest(row["secret_sha256"], digest):
                    found = row
        if found is None or found["revoked_at"] is not None:
            return None
        return connection_record(found), found["upstream_key"]

    def list_connections(self, owner_id: str) -> list[ConnectionRecord]:
        with read_tx(self._engine) as conn:
            rows = conn.execute(
                sa.select(t.connections)
                .where(t.connections.c.owner_id == owner_id)
                .order_by(t.connections.c.created_at, t.connections.c.id)
            )
            return [connection_record(r) for r in rows.mappings()]

    def rotate_connection(self, owner_id: str, connection_id: str) -> tuple[ConnectionRecord, str]:
        """A new token for a live connection; the old one stops working at once."""
        plaintext, prefix = new_connection_token()
        with write_tx(self._engine) as conn:
            done = conn.execute(
                sa.update(t.connections)
                .where(
                    t.connections.c.id == connection_id,
                    t.connections.c.owner_id == owner_id,
                    t.connections.c.revoked_at.is_(None),
                )
                .values(secret_sha256=hash_secret(plaintext), prefix=prefix)
            )
            if done.rowcount != 1:
                raise missing_connection(connection_id)
            row = self._connection_row(conn, owner_id, connection_id)
        return connection_record(row), plaintext

    def revoke_connection(self, owner_id: str, connection_id: str) -> ConnectionRecord:
        """Revoke (idempotent); its token opens nothing from now on."""
        with write_tx(self._engine) as conn:
            conn.execute(
                sa.update(t.connections)
                .where(
                    t.connections.c.id == connection_id,
                    t.connections.c.owner_id == owner_id,
                    t.connections.c.revoked_at.is_(None),
                )
                .values(revoked_at=now())
            )
            return connection_record(self._connection_row(conn, owner_id, connection_id))

    def _connection_row(
        self, conn: sa.Connection, owner_id: str, connection_id: str
    ) -> Mapping[Any, Any]:
        query = sa.select(t.connections).where(
            t.connections.c.id == connection_id, t.connections.c.owner_id == owner_id
        )
        row = conn.execute(query).mappings().first()
        if row is None:
            raise missing_connection(connection_id)
        return row
