"""A fake OpenAI-compatible judge on 127.0.0.1 (a free port), answering from known strengths.

With probability ``rho`` it names the result shown first whatever the texts;
otherwise it answers by Bradley-Terry from the strengths in the item texts
(``strength=<float>``). Over both orders the first-position rate is then
``rho + (1 - rho) / 2`` (0.7 at ``rho = 0.4``). ``unparseable`` of the replies
say nothing usable. ``faults`` maps a prompt's item pair to a list of faults
served before the real answer.

Every answer is drawn from its own generator, seeded by a hash of (``seed``, the
query line, the ids shown first and second, and how many real answers this
prompt had before), so what a prompt gets depends neither on the arrival order
of concurrent requests nor on the faults served before it: a run at any
``--concurrency`` gets the same answers, and a test built on them is reproducible.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

_STRENGTH = re.compile(r"strength=(-?[0-9.]+)")
_QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)


def answer_text(
    first: float, second: float, *, rho: float, unparseable: float, rng: random.Random
) -> str:
    """The fake's reply for strengths ``first`` (shown first) and ``second``."""
    if rng.random() < unparseable:
        return "I cannot decide between these."
    if rng.random() < rho:
        return "Result A comes first.\nVerdict: A"
    p_first = 1 / (1 + pow(2.718281828459045, second - first))
    return "Verdict: A" if rng.random() < p_first else "Thinking.\n**Verdict: B**"


def request_rng(seed: int, query: str, first: str, second: str, attempt: int) -> random.Random:
    """The generator of one answer: a hash of the seed, the pair as shown and the attempt."""
    text = "\x1f".join((str(seed), query, first, second, str(attempt)))
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


@dataclass
class FakeJudge:
    rho: float = 0.4
    unparseable: float = 0.05
    seed: int = 0
    faults: dict[str, list[str]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    port: int = 0
    answered: dict[str, int] = field(default_factory=dict)
    stop: Callable[[], None] = lambda: None  # set by serving(): stop the server now

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        prompt = body["messages"][0]["content"]
        self.headers.append(request.headers.get("authorization", ""))
        ids = re.findall(r"\[id (\S+?)\]", prompt)
        key = "|".join(ids)
        self.requests.append(key)
        queue = self.faults.get(key)
        if queue:
            fault = queue.pop(0)
            if fault == "429":
                return PlainTextResponse(
                    "slow down", status_code=429, headers={"Retry-After": "0.2"}
                )
            if fault == "500":
                return PlainTextResponse("boom", status_code=500)
            if fault == "timeout":
                await asyncio.sleep(2.0)
            if fault == "malformed":
                return PlainTextResponse("{not json", status_code=200)
            if fault == "drop":
                raise ConnectionResetError  # uvicorn closes the connection without a response
            if fault == "401":
                return PlainTextResponse("bad key", status_code=401)
        first, second = (float(s) for s in _STRENGTH.findall(prompt)[0:2])
        found = _QUERY.search(prompt)
        query = found.group(1) if found else ""
        attempt = self.answered.get(f"{query}|{key}", 0)
        self.answered[f"{query}|{key}"] = attempt + 1
        rng = request_rng(self.seed, query, ids[0], ids[1], attempt)
        text = answer_text(first, second, rho=self.rho, unparseable=self.unparseable, rng=rng)
        return JSONResponse(
            {
                "choices": [{"message": {"role": "assistant", "content": text}}],
                "usage": {"total_tokens": 7},
            }
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(judge: FakeJudge) -> Iterator[str]:
    """Serve ``judge`` in a thread; yields its base URL; stops on exit."""
    app = Starlette(routes=[Route("/v1/chat/completions", judge.chat, methods=["POST"])])
    judge.port = judge.port or _free_port()  # a given port: a restarted server, same URL
    config = uvicorn.Config(app, host="127.0.0.1", port=judge.port, log_level="critical")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)

    def stop() -> None:
        server.should_exit = True
        thread.join(10)

    judge.stop = stop
    try:
        yield f"http://127.0.0.1:{judge.port}/v1"
    finally:
        stop()
