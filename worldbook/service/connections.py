"""Proxy connections' use cases (ADR 0017): create, list, rotate, revoke — each for the acting
user's own connections only — and opening one by its token.

The upstream key is sealed before it is stored (:class:`~worldbook.adapters.secrets.Sealer`)
and opened only to call the upstream; no answer, list or log carries it.
"""

from __future__ import annotations

from dataclasses import dataclass

from worldbook.adapters.secrets import Sealer
from worldbook.core.connections import ConnectionRecord, ConnectionSpec, check_spec
from worldbook.errors import AuthenticationFailed, InvalidInput
from worldbook.service.services import Services
from worldbook.settings import WorldbookSettings


def sealer(settings: WorldbookSettings) -> Sealer:
    key = settings.secret_key.get_secret_value() if settings.secret_key is not None else None
    return Sealer(key)


def allowed_hosts(settings: WorldbookSettings) -> tuple[str, ...]:
    return tuple(h.strip().lower() for h in settings.proxy_allowed_upstreams if h.strip())


def create_connection(
    services: Services, owner_id: str, spec: ConnectionSpec, upstream_key: str | None
) -> tuple[ConnectionRecord, str]:
    """A new connection of ``owner_id``; returns it and its token (shown once)."""
    checked = check_spec(spec, allowed_hosts(services.settings))
    try:  # a tokenizer this server cannot load would fail every turn: refuse it now
        services.token_counter(checked.tokenizer)
    except InvalidInput as exc:
        raise InvalidInput(exc.message, field="tokenizer") from None
    sealed = sealer(services.settings).seal(upstream_key) if upstream_key else None
    return services.store.create_connection(owner_id, checked, sealed)


@dataclass(frozen=True, slots=True)
class OpenConnection:
    """A live connection and its upstream key (opened for one call; never stored or shown)."""

    record: ConnectionRecord
    upstream_key: str | None


def open_connection(services: Services, token: str | None) -> OpenConnection:
    """The live connection of a presented token; 401 for none, an unknown or a revoked one
    (one message for all: a caller learns nothing about which)."""
    found = services.store.authenticate_connection(token.strip()) if token else None
    if found is None:
        raise AuthenticationFailed(
            "The connection token is unknown or revoked. Paste the token of a live connection "
            "as the API key (create one with `worldbook connections create` or on the "
            "inspector's 'Connect an app' page)."
        )
    record, sealed = found
    # The operator's allow list holds for existing connections too (it may have shrunk).
    check_spec(record.spec, allowed_hosts(services.settings))
    key = sealer(services.settings).open(sealed) if sealed is not None else None
    return OpenConnection(record, key)
