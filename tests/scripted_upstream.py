"""A *scripted* upstream model server for the proxy tests: a real HTTP server on loopback that
speaks the OpenAI Chat Completions and Anthropic Messages wire protocols, records every request
it receives and answers with the replies a test queued (JSON, or SSE events when streaming).

It is named "scripted" on purpose: it drives the proxy's protocol handling and tool loop
deterministically; the real model is the xllamacpp server of ``tests/integration``. With
``relay`` set, every call no reply was queued for goes on to that real server unchanged (a
scripted tool call first, the real model's answer to its result after).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

JSONDict = dict[str, Any]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (the proxy's timeout) is part of the script, not an error."""


@dataclass
class Reply:
    status: int = 200
    body: JSONDict | None = None
    events: list[tuple[str | None, JSONDict | str]] | None = None  # (event name, data)
    delay_s: float = 0.0  # wait before answering (timeouts)
    # A server that echoes the request's headers: "$authorization" and "$x-api-key" in the
    # body or events become the values the request carried.
    echo: bool = False


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: JSONDict


@dataclass
class ScriptedUpstream:
    replies: deque[Reply] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    relay: tuple[str, str] | None = None  # (base URL, key): unscripted calls go to a real model
    models: Reply | None = None  # the answer to GET /models (else a list of one model)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def start(self) -> ScriptedUpstream:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.seen.append(Seen(self.path, headers, {}))
                listed = Reply(body={"object": "list", "data": [{"id": "scripted"}]})
                self._send(owner.models or listed)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(size))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.seen.append(Seen(self.path, headers, body))
                if not owner.replies and owner.relay is not None:
                    self._relay(body)
                    return
                reply = owner.replies.popleft() if owner.replies else Reply(500, {"error": "x"})
                self._send(reply)

            def _relay(self, body: JSONDict) -> None:
                assert owner.relay is not None
                base, key = owner.relay
                url = base + self.path.removeprefix("/v1")
                headers = {"authorization": f"Bearer {key}", "x-api-key": key}
                with httpx.stream("POST", url, json=body, headers=headers, timeout=300) as got:
                    self.send_response(got.status_code)
                    kind = got.headers.get("content-type", "application/json")
                    self.send_header("content-type", kind)
                    self.end_headers()
                    for piece in got.iter_raw():
                        self.wfile.write(piece)
                        self.wfile.flush()

            def _echoed(self, text: str, reply: Reply) -> str:
                if reply.echo:
                    for name in ("authorization", "x-api-key"):
                        text = text.replace(f"${name}", self.headers.get(name) or "")
                return text

            def _send(self, reply: Reply) -> None:
                time.sleep(reply.delay_s)
                if reply.events is None:
                    data = self._echoed(json.dumps(reply.body), reply).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, event in reply.events:
                    text = event if isinstance(event, str) else json.dumps(event)
                    text = self._echoed(text, reply)
                    line = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
                    self.wfile.write(line.encode())
                    self.wfile.flush()

        self.server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def openai_answer(text: str | None, tool_calls: list[JSONDict] | None = None) -> JSONDict:
    message: JSONDict = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def openai_call(call_id: str, name: str, arguments: JSONDict) -> JSONDict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def openai_chunks(texts: list[str], call: JSONDict | None = None) -> Reply:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "s"}
    events: list[tuple[str | None, JSONDict | str]] = []
    for text in texts:
        choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
        events.append((None, {**base, "choices": [choice]}))
    if call is not None:
        delta = {"tool_calls": [{"index": 0, **call}]}
        events.append((None, {**base, "choices": [{"index": 0, "delta": delta}]}))
    finish = "tool_calls" if call else "stop"
    events.append((None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    events.append((None, {**base, "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return Reply(events=events)


def anthropic_answer(text: str, tool: tuple[str, str, JSONDict] | None = None) -> JSONDict:
    content: list[JSONDict] = [{"type": "text", "text": text}]
    if tool is not None:
        content.append({"type": "tool_use", "id": tool[0], "name": tool[1], "input": tool[2]})
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


def anthropic_events(text: str, tool: tuple[str, str, JSONDict] | None = None) -> Reply:
    message = {**anthropic_answer("", None), "content": [], "stop_reason": None}
    events: list[tuple[str | None, JSONDict | str]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", _start(0, {"type": "text", "text": ""})),
        ("content_block_delta", _delta(0, {"type": "text_delta", "text": text})),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]
    if tool is not None:
        block = {"type": "tool_use", "id": tool[0], "name": tool[1], "input": {}}
        partial = {"type": "input_json_delta", "partial_json": json.dumps(tool[2])}
        events += [
            ("content_block_start", _start(1, block)),
            ("content_block_delta", _delta(1, partial)),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ]
    stop = "tool_use" if tool else "end_turn"
    delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    events.append(("message_delta", {**delta, "usage": {"output_tokens": 3}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return Reply(events=events)


def _start(index: int, block: JSONDict) -> JSONDict:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: JSONDict) -> JSONDict:
    return {"type": "content_block_delta", "index": index, "delta": delta}
