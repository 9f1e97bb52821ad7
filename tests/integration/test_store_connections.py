"""Proxy connections in the store (ADR 0017): SQLite, PostgreSQL and the in-memory fake."""

from __future__ import annotations

import pytest

from worldbook.adapters.store import SqlStore
from worldbook.core.api_keys import hash_secret
from worldbook.core.connections import CONNECTION_PREFIX, ConnectionSpec
from worldbook.errors import NotFound

SPEC = ConnectionSpec(
    name="Tavern",
    upstream_kind="openai",
    upstream_url="http://127.0.0.1:9/v1",
    book_ids=("b1", "b2"),
    char_name="Mira",
    user_name="Ann",
    input_window=4096,
)


def test_create_authenticate_list(store: SqlStore) -> None:
    record, token = store.create_connection("alice", SPEC, "sealed-key")
    assert token.startswith(CONNECTION_PREFIX) and record.prefix == token[:12]
    assert record.spec == SPEC and record.has_upstream_key and record.revoked_at is None
    found = store.authenticate_connection(token)
    assert found is not None and found[0].id == record.id and found[1] == "sealed-key"
    assert store.authenticate_connection(token + "x") is None
    assert store.authenticate_connection("wb_" + token[4:]) is None  # the API-key form
    assert [c.id for c in store.list_connections("alice")] == [record.id]
    assert store.list_connections("bob") == []
    assert hash_secret(token) not in repr(record)


def test_rotate_and_revoke(store: SqlStore) -> None:
    record, token = store.create_connection("alice", SPEC, None)
    assert not record.has_upstream_key
    rotated, new = store.rotate_connection("alice", record.id)
    assert new != token and rotated.id == record.id
    assert store.authenticate_connection(token) is None
    assert store.authenticate_connection(new) is not None
    with pytest.raises(NotFound):
        store.rotate_connection("bob", record.id)  # another user's: as if it did not exist
    with pytest.raises(NotFound):
        store.revoke_connection("bob", record.id)
    revoked = store.revoke_connection("alice", record.id)
    assert revoked.revoked_at is not None
    assert store.revoke_connection("alice", record.id).revoked_at == revoked.revoked_at
    assert store.authenticate_connection(new) is None
    with pytest.raises(NotFound):
        store.rotate_connection("alice", record.id)  # a revoked connection stays revoked
