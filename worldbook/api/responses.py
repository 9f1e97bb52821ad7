"""A JSON response encoded with orjson: the turn answers (selection JSON with its trace and two
renderings) encode ~10× faster than with the standard library (benchmarks/bench_response.py).
FastAPI's own ``ORJSONResponse`` is deprecated in favour of response models, but the selection
is built as plain dicts on purpose (no per-turn pydantic validation), so this stays small."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import JSONResponse


class FastJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)
