"""Request dependencies: the services, and who is calling.

Two headers identify a caller (decision in docs/decisions.md):
- the calling *app* proves itself with an API key, ``Authorization: Bearer <key>`` or
  ``X-API-Key: <key>`` (created and revoked with ``worldbook keys``; stored hashed);
- the app names the *acting user* in ``X-Worldbook-User``; ownership and visibility are enforced
  for that user. Users need no registration: a user exists once named.
A missing, unknown or revoked key is 401 before anything else is looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from worldbook.core.records import ApiKeyRecord
from worldbook.errors import AuthenticationFailed, InvalidInput
from worldbook.service.services import Services

USER_HEADER = "X-Worldbook-User"
USER_MAX = 255

_bearer = HTTPBearer(auto_error=False, description="An API key from `worldbook keys create`.")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="The same key.")


async def get_services(request: Request) -> Services:
    # async: no I/O here, and a sync dependency would cost a thread-pool hop per request.
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated app (its key) acting for ``user_id``."""

    key: ApiKeyRecord
    user_id: str


def get_api_key(
    services: ServicesDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    header_key: Annotated[str | None, Security(_api_key)],
) -> ApiKeyRecord:
    presented = bearer.credentials if bearer is not None else header_key
    if not presented:
        raise AuthenticationFailed(
            "Send an API key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>' "
            "(create one with `worldbook keys create`)."
        )
    key = services.keys.authenticate(presented.strip())
    if key is None:
        # One message for unknown and revoked keys: a caller learns nothing about either.
        raise AuthenticationFailed("The API key is unknown or revoked; use a current key.")
    return key


async def get_caller(
    key: Annotated[ApiKeyRecord, Depends(get_api_key)],
    user: Annotated[
        str | None,
        Header(
            alias=USER_HEADER,
            description="The acting user, as the calling app identifies them (1–255 chars).",
        ),
    ] = None,
) -> Caller:
    if user is None or not user.strip():
        raise AuthenticationFailed(
            f"Name the acting user in the {USER_HEADER} header.", field=USER_HEADER
        )
    if len(user) > USER_MAX or not user.isprintable():
        raise InvalidInput(
            f"{USER_HEADER} must be 1–{USER_MAX} printable characters.", field=USER_HEADER
        )
    return Caller(key=key, user_id=user)


CallerDep = Annotated[Caller, Depends(get_caller)]
"""The authenticated caller; every ``/v1`` route depends on it."""
