"""Proxy connections (ADR 0017): the acting user's own, created, listed, rotated and revoked
with an API key like every ``/v1`` route. A connection token is shown once, at creation and
at rotation; the upstream key is never shown."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, status
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.core.connections import ConnectionRecord, ConnectionSpec
from worldbook.service.connections import create_connection

router = APIRouter(tags=["connections"])
ConnectionId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
Short = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class ConnectionIn(BaseModel):
    """A connection: whose books, which upstream, which model profile."""

    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    upstream_kind: Literal["openai", "anthropic"] = "openai"
    upstream_url: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    upstream_key: Annotated[str, StringConstraints(max_length=4000)] | None = Field(
        default=None, description="Stored sealed (WORLDBOOK_SECRET_KEY); never shown again."
    )
    upstream_model: Short | None = Field(
        default=None, description="Fixes the model; default: the model the app names."
    )
    book_ids: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]] = Field(
        default_factory=list, max_length=100
    )
    story_id: Short | None = None
    character_id: Short | None = None
    char_name: Short | None = Field(default=None, description="Fills {{char}}.")
    user_name: Short | None = Field(default=None, description="Fills {{user}}.")
    input_window: int = Field(default=8192, ge=512, le=100_000_000)
    tokenizer: Annotated[str, StringConstraints(min_length=1, max_length=200)] = "cl100k_base"
    supports_tools: bool | None = Field(
        default=None, description="The model takes tools; default: when the app sends tools."
    )


class ConnectionOut(BaseModel):
    id: str
    name: str
    prefix: str
    upstream_kind: str
    upstream_url: str
    upstream_model: str | None
    has_upstream_key: bool
    book_ids: list[str]
    story_id: str | None
    character_id: str | None
    input_window: int
    tokenizer: str
    revoked: bool
    created_at: str


class ConnectionCreated(ConnectionOut):
    token: str = Field(description="The app's API key; shown only now.")
    base_url_path: str = Field(description="Append to this server's URL for the base URL.")


def connection_out(record: ConnectionRecord) -> ConnectionOut:
    spec = record.spec
    return ConnectionOut(
        id=record.id,
        name=spec.name,
        prefix=record.prefix,
        upstream_kind=spec.upstream_kind,
        upstream_url=spec.upstream_url,
        upstream_model=spec.upstream_model,
        has_upstream_key=record.has_upstream_key,
        book_ids=list(spec.book_ids),
        story_id=spec.story_id,
        character_id=spec.character_id,
        input_window=spec.input_window,
        tokenizer=spec.tokenizer,
        revoked=record.revoked_at is not None,
        created_at=record.created_at.isoformat(),
    )


def created(record: ConnectionRecord, token: str) -> ConnectionCreated:
    out = connection_out(record).model_dump()
    path = f"/{record.spec.upstream_kind}/v1"
    return ConnectionCreated(**out, token=token, base_url_path=path)


@router.post("/connections", status_code=status.HTTP_201_CREATED)
def create(body: ConnectionIn, caller: CallerDep, services: ServicesDep) -> ConnectionCreated:
    """Create a connection; its token is in this answer only."""
    fields = body.model_dump(exclude={"upstream_key", "book_ids"})
    spec = ConnectionSpec(**fields, book_ids=tuple(body.book_ids))
    record, token = create_connection(services, caller.user_id, spec, body.upstream_key)
    return created(record, token)


@router.get("/connections")
def list_all(caller: CallerDep, services: ServicesDep) -> list[ConnectionOut]:
    """The acting user's connections (never a token or an upstream key)."""
    return [connection_out(r) for r in services.store.list_connections(caller.user_id)]


@router.post("/connections/{connection_id}/rotate")
def rotate(
    connection_id: ConnectionId, caller: CallerDep, services: ServicesDep
) -> ConnectionCreated:
    """A new token; the old one stops working now."""
    record, token = services.store.rotate_connection(caller.user_id, connection_id)
    return created(record, token)


@router.delete("/connections/{connection_id}")
def revoke(connection_id: ConnectionId, caller: CallerDep, services: ServicesDep) -> ConnectionOut:
    """Revoke; its token opens nothing from now on."""
    return connection_out(services.store.revoke_connection(caller.user_id, connection_id))
