"""``GET /v1/limits``: the DESIGN §6 limits in force, public (no API key), so a client — the lore
inspector first — checks input as the author types against the server's own numbers instead
of a copy that can drift."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from worldbook.core.limit_table import INT32_MAX, LIMITS

router = APIRouter(tags=["system"])


@router.get("/limits")
def limits() -> dict[str, int]:
    """Every limit by its name in :class:`worldbook.core.limit_table.Limits` (lengths count
    code points; the minimums count an East Asian wide character as two), and ``int32_max``,
    the bound of the integer fields."""
    return {**asdict(LIMITS), "int32_max": INT32_MAX}
