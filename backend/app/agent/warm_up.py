"""The first model call's one-time work, done at start-up instead of in the first question.

LiteLLM and the OpenAI SDK load much on their first call rather than at import: the SDK's
chat resources, LiteLLM's stream handling and its provider tables, the tokenizer it counts
with. That is over a second of CPU holding the interpreter lock, so the first question
after a start used to stall every other request that long. At start-up, the same call is
made to a server of our own on loopback (never to the configured provider), and the
configured models' tokenizers are loaded.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from smolagents.models import ChatMessage, MessageRole

from app.agent.model import call_limits, create_model
from app.config import Settings

log = logging.getLogger(__name__)

WARM_UP_MODEL = "openai/warm-up"
REPLY = "Thought: ready.\n<code>\nfinal_answer('ready')\n</code>"


class _Reply(BaseHTTPRequestHandler):
    """Answers any chat completion with a short streamed reply, as an OpenAI server does."""

    def log_message(self, *args: Any) -> None:  # no access log
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        chunk = {"id": "warm-up", "object": "chat.completion.chunk", "model": "warm-up"}
        pieces = [
            {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}]},
            {
                **chunk,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14},
            },
        ]
        body = "".join(f"data: {json.dumps(p)}\n\n" for p in pieces) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())


def first_model_call(settings: Settings) -> None:
    """Make a streamed model call to a loopback server of our own, and count tokens as
    each configured model's runs will (blocking: run it in a thread). Never raises: what
    it did not load is loaded by the first question instead.

    Args:
        settings: The settings; their model limits and configured models are used, never
            their server or key.
    """
    try:
        _call_loopback(settings)
    except Exception as exc:
        log.info("model calls not warmed up (the first question will be slower): %r", exc)
    for model_id in settings.llm_models:
        try:
            call_limits(settings, model_id).count(messages=[{"role": "user", "content": "Ready?"}])
        except Exception as exc:
            log.info("no tokenizer loaded ahead for %s: %r", model_id, exc)


def _call_loopback(settings: Settings) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Reply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        local = settings.model_copy(
            update={
                "LLM_API_BASE": f"http://127.0.0.1:{server.server_address[1]}/v1",
                "LLM_API_KEY": "warm-up",
                "LLM_MAX_RETRIES": 0,
                "LLM_TIMEOUT_SECONDS": 10.0,
            }
        )
        message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Ready?"}])
        for _ in create_model(local, WARM_UP_MODEL).generate_stream([message]):
            pass
    finally:
        server.shutdown()
        server.server_close()
