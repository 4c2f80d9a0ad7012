"""A scripted OpenAI-compatible chat server on loopback: the LLM of the tests.

The product reaches it through LiteLLM exactly as it reaches a real provider. Each
request takes the next reply from the script; a reply is text (what the model says), or
a failure: an HTTP error, garbage, or a long silence. Requests are recorded so tests can
assert what the model was shown (e.g. the error text of the previous step).

The knowledge review pass (app/knowledge/review.py) runs after a run ends; its requests
(told apart by REVIEW_MARKER in their system prompt) never take a reply scripted for the
agent: they are answered from `review_replies` (when that is empty: no proposals) and
recorded in `review_requests`, apart from `requests` and `prompts()`. So are a job
repair's requests (REPAIR_MARKER): answered from `repair_replies` (when that is empty: a
reply with no code, so the repair fails) and recorded in `repair_requests`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.jobs.repair_prompt import REPAIR_MARKER
from app.knowledge.review_prompt import REVIEW_MARKER
from tests.support.services import free_port


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str


@dataclass(frozen=True)
class Silence:
    """Answer nothing for this long (to trip the client's timeout)."""

    seconds: float


@dataclass(frozen=True)
class Endless:
    """Write `piece` and a count again and again ("and then 1, and then 2, …"): until the
    request's max_tokens (then finish_reason "length", as a real server does) or, without
    one, for `seconds`."""

    piece: str = "and then "
    seconds: float = 30.0


@dataclass(frozen=True)
class Disconnect:
    """Stream `text`, then drop the connection mid-reply (a server that died)."""

    text: str = "Thought: I will look at the"


@dataclass(frozen=True)
class NoUsage:
    """Stream `text` with no usage at all (as some local servers do)."""

    text: str


@dataclass(frozen=True)
class Empty:
    """A 200 stream with nothing in it (llama.cpp's answer to a prompt it cannot fit), with
    usage saying how long the prompt was by the server's count, if given."""

    prompt_tokens: int | None = None


Misbehaviour = Endless | Disconnect | NoUsage | Empty
Reply = (
    str
    | HttpError
    | Silence
    | Misbehaviour
    | Callable[[list[dict[str, Any]]], "str | HttpError | Silence | Misbehaviour"]
)


# What the review pass is answered when no review reply is scripted: nothing to propose.
NO_PROPOSALS = '{"items": []}'


def is_review(body: dict[str, Any]) -> bool:
    """Whether a request is the knowledge review pass's (its system prompt has the marker)."""
    return any(
        m.get("role") == "system" and REVIEW_MARKER in _text(m.get("content"))
        for m in body.get("messages") or []
    )


# What a job repair is answered when no repair reply is scripted: no code (it fails).
NO_REPAIR = "NOTE: I cannot repair this job."


def is_repair(body: dict[str, Any]) -> bool:
    """Whether a request is a job repair's (its system prompt has the marker)."""
    return any(
        m.get("role") == "system" and REPAIR_MARKER in _text(m.get("content"))
        for m in body.get("messages") or []
    )


def code_reply(code: str, thought: str = "I will run some code.") -> str:
    """What a model following smolagents' format answers: a thought, then a code block."""
    return f"Thought: {thought}\n<code>\n{code.strip()}\n</code>"


def final_reply(answer_expr: str, thought: str = "I have the answer.") -> str:
    return code_reply(f"final_answer({answer_expr})", thought)


def count_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: about four characters a token."""
    return max(1, len(text) // 4)


@dataclass
class ScriptedLLM:
    port: int = field(default_factory=free_port)
    # Where it listens: loopback, or an address a container reaches (make test-deploy
    # binds the Docker bridge's gateway).
    host: str = "127.0.0.1"
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Each recorded request's W3C traceparent header (None without one).
    traceparents: list[str | None] = field(default_factory=list)
    chunk_delay: float = 0.0
    # Answers requests once the script is used up (e.g. many sessions at once, each
    # answered by what its own messages show); None: "The script has no more replies."
    responder: Reply | None = None
    record: bool = True
    # The review pass's replies and requests (see the module's docstring).
    review_replies: deque[Reply] = field(default_factory=deque)
    review_requests: list[dict[str, Any]] = field(default_factory=list)
    # A job repair's replies and requests (see the module's docstring).
    repair_replies: deque[Reply] = field(default_factory=deque)
    repair_requests: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(
        self,
        *replies: Reply,
        review: tuple[Reply, ...] | list[Reply] = (),
        repair: tuple[Reply, ...] | list[Reply] = (),
    ) -> None:
        """The agent's replies, in order; `review`: the review pass's (none: it proposes
        nothing); `repair`: a job repair's (none: it proposes no code)."""
        self.repair_replies.clear()
        self.repair_replies.extend(repair)
        self.repair_requests.clear()
        self.replies.clear()
        self.replies.extend(replies)
        self.review_replies.clear()
        self.review_replies.extend(review)
        self.review_requests.clear()
        self.requests.clear()
        self.traceparents.clear()
        self.chunk_delay = 0.0

    def prompts(self) -> list[str]:
        """The text of every request's messages, one string a request."""
        return ["\n".join(_text(m.get("content")) for m in r["messages"]) for r in self.requests]

    def start(self) -> ScriptedLLM:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def finish(self) -> None:
                with contextlib.suppress(OSError):  # a connection dropped on purpose
                    super().finish()

            def do_GET(self) -> None:
                # Browser tests read what the agent was prompted with (GET /control/prompts).
                if self.path == "/control/prompts":
                    self._json(200, {"prompts": llm.prompts()})
                else:
                    self._json(200, {"scripted": len(llm.replies)})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                if self.path == "/control/script":
                    # Browser tests script the model from outside this process.
                    llm.script(
                        *(_reply_from_json(r) for r in body["replies"]),
                        review=[_reply_from_json(r) for r in body.get("review", [])],
                        repair=[_reply_from_json(r) for r in body.get("repair", [])],
                    )
                    llm.chunk_delay = float(body.get("chunk_delay", 0))
                    self._json(200, {"scripted": len(llm.replies)})
                    return
                reply: Reply
                if is_review(body):
                    if llm.record:
                        llm.review_requests.append(body)
                    reply = llm.review_replies.popleft() if llm.review_replies else NO_PROPOSALS
                elif is_repair(body):
                    if llm.record:
                        llm.repair_requests.append(body)
                    reply = llm.repair_replies.popleft() if llm.repair_replies else NO_REPAIR
                else:
                    if llm.record:
                        llm.requests.append(body)
                        llm.traceparents.append(self.headers.get("traceparent"))
                    reply = (
                        llm.replies.popleft()
                        if llm.replies
                        else llm.responder or "The script has no more replies."
                    )
                if callable(reply):  # what it answers may be a failure too
                    reply = reply(body["messages"])
                if isinstance(reply, Silence):
                    time.sleep(reply.seconds)
                    return
                if isinstance(reply, Endless | Disconnect | NoUsage | Empty):
                    self._misbehave(reply, body)
                    return
                if isinstance(reply, HttpError):
                    self._json(
                        reply.status,
                        {
                            "error": {
                                "message": reply.message,
                                "type": "error",
                                "code": reply.status,
                            }
                        },
                    )
                    return
                text = reply
                for stop in body.get("stop") or []:
                    if stop in text:
                        text = text[: text.index(stop)]
                prompt = "\n".join(_text(m.get("content")) for m in body["messages"])
                usage = {
                    "prompt_tokens": count_tokens(prompt),
                    "completion_tokens": count_tokens(text),
                    "total_tokens": count_tokens(prompt) + count_tokens(text),
                }
                if body.get("stream"):
                    self._stream(body["model"], text, usage)
                else:
                    self._json(
                        200,
                        {
                            "id": f"chatcmpl-{uuid.uuid4().hex}",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": usage,
                        },
                    )

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, base: dict[str, Any], **over: Any) -> None:
                self.wfile.write(f"data: {json.dumps({**base, **over})}\n\n".encode())
                self.wfile.flush()

            def _piece(self, base: dict[str, Any], text: str) -> None:
                delta = {"role": "assistant", "content": text}
                self._chunk(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}])

            def _misbehave(self, reply: Misbehaviour, body: dict[str, Any]) -> None:
                # A server that dies mid-reply leaves its body short of what it announced.
                announced = 1_000_000 if isinstance(reply, Disconnect) else None
                base = self._begin_stream(body["model"], announced)
                if isinstance(reply, Endless):
                    limit, written, n = body.get("max_tokens"), "", 0
                    until = time.monotonic() + reply.seconds
                    while time.monotonic() < until:
                        if limit and count_tokens(written) >= limit:
                            break
                        n += 1  # numbered: new text each time, no loop to spot
                        piece = f"{reply.piece}{n}, "
                        self._piece(base, piece)
                        written += piece
                        time.sleep(llm.chunk_delay or 0.001)
                    finish = {"index": 0, "delta": {}, "finish_reason": "length"}
                    self._chunk(base, choices=[finish])
                    usage = {"prompt_tokens": 100, "completion_tokens": count_tokens(written)}
                    self._chunk(base, choices=[], usage=usage)
                elif isinstance(reply, Disconnect):
                    self._piece(base, reply.text)
                    time.sleep(0.05)
                    self.connection.shutdown(2)  # gone without a word: no finish, no [DONE]
                    self.close_connection = True
                    return
                elif isinstance(reply, NoUsage):
                    for i in range(0, len(reply.text), 12):
                        self._piece(base, reply.text[i : i + 12])
                    self._chunk(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
                else:  # Empty
                    self._chunk(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
                    if reply.prompt_tokens is not None:
                        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": 0}
                        self._chunk(base, choices=[], usage=usage)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _begin_stream(self, model: str, length: int | None = None) -> dict[str, Any]:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                if length is not None:
                    self.send_header("Content-Length", str(length))
                self.end_headers()
                return {
                    "id": f"chatcmpl-{uuid.uuid4().hex}",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                }

            def _stream(self, model: str, text: str, usage: dict[str, int]) -> None:
                base = self._begin_stream(model)
                pieces = [text[i : i + 12] for i in range(0, len(text), 12)] or [""]
                for piece in pieces:
                    chunk = {
                        **base,
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", "content": piece},
                                "finish_reason": None,
                            }
                        ],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    if llm.chunk_delay:
                        time.sleep(llm.chunk_delay)
                done = {
                    **base,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": usage,
                }
                self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()


def _reply_from_json(reply: Any) -> Reply:
    """A reply from JSON: text, {"code"}, {"final"}, {"status", "message"} or {"silence"}."""
    if isinstance(reply, str):
        return reply
    if "code" in reply:
        return code_reply(reply["code"], reply.get("thought", "I will run some code."))
    if "final" in reply:
        return final_reply(json.dumps(reply["final"]))
    if "status" in reply:
        return HttpError(int(reply["status"]), str(reply.get("message", "error")))
    if "endless" in reply:
        return Endless(str(reply["endless"]))
    if reply.get("empty"):
        return Empty()
    return Silence(float(reply["silence"]))


def main() -> None:
    """`python -m tests.support.llm --port N`: the scripted LLM on its own, for browser tests."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ScriptedLLM(port=args.port).start()
    print(f"scripted LLM on {server.api_base}; POST /control/script to script it", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


if __name__ == "__main__":
    main()
