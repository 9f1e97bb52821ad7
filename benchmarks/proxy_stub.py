"""A stub OpenAI-compatible upstream for ``bench_proxy.py``: answers at once (or streams 16
chunks 2 ms apart), so what is measured through it is the proxy's own overhead.

    python benchmarks/proxy_stub.py PORT
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

CHUNKS = 16
GAP_S = 0.002
_BASE = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1, "model": "stub"}


async def chat(request: Request) -> Response:
    body = await request.json()
    prompt = sum(len(str(m.get("content", ""))) for m in body["messages"]) // 4
    usage = {"prompt_tokens": prompt, "completion_tokens": CHUNKS, "total_tokens": prompt + 16}
    if not body.get("stream"):
        message = {"role": "assistant", "content": "word " * CHUNKS}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return JSONResponse(
            {**_BASE, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    async def events() -> AsyncIterator[str]:
        for _ in range(CHUNKS):
            choice = {"index": 0, "delta": {"content": "word "}, "finish_reason": None}
            yield f"data: {json.dumps({**_BASE, 'choices': [choice]})}\n\n"
            await asyncio.sleep(GAP_S)
        done = {"index": 0, "delta": {}, "finish_reason": "stop"}
        yield f"data: {json.dumps({**_BASE, 'choices': [done]})}\n\n"
        yield f"data: {json.dumps({**_BASE, 'choices': [], 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
