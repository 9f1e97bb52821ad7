"""The lore inspector at ``/ui``: static HTML, CSS and ES modules shipped inside the package.

The page is a client of the public ``/v1`` API like any other app (DESIGN §5): it holds no
server-side logic, so this module only serves files. Every response carries a Content Security
Policy that lets the page load code and data from its own origin only — no CDN, no inline
script, no request to any other host — and forbids framing (the page handles an API key).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
UI_PATH = "/ui"

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    # Revalidate every time (ETag/Last-Modified make that cheap): an upgraded server never
    # runs against a cached older module of the page.
    "Cache-Control": "no-cache",
}


class InspectorFiles(StaticFiles):
    """The inspector's files, each with :data:`SECURITY_HEADERS`."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(SECURITY_HEADERS)
        return response


async def _to_index(request: Request) -> RedirectResponse:
    """``/ui`` → ``/ui/``, so the page's relative module paths resolve under ``/ui/``."""
    root = request.scope.get("root_path", "")
    return RedirectResponse(f"{root}{UI_PATH}/", status_code=307, headers=SECURITY_HEADERS)


def install(app: FastAPI) -> None:
    """Serve the inspector at ``/ui/`` (and redirect ``/ui`` there)."""
    app.router.routes.append(Route(UI_PATH, _to_index, methods=["GET"], name="ui"))
    app.mount(UI_PATH, InspectorFiles(directory=UI_DIR, html=True), name="ui-files")
