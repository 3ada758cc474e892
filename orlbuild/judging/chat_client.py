"""An OpenAI-compatible ``/chat/completions`` client on plain httpx (docs/llm-judges.md, "Retries").

``ask_all`` runs ``concurrency`` workers on one ``httpx.AsyncClient``; the
workers pull requests from one iterator, so memory does not grow with the
number of requests. A request is retried on 429 (waiting what ``Retry-After``
says, else the backoff), on 5xx, timeouts, dropped connections and malformed
bodies, up to ``retries`` times with exponential backoff; any other 4xx stops the
run (a wrong model or key is not cured by asking again). The API key goes in
the ``Authorization`` header only: it is in no message, no record and no repr.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NoReturn

import httpx

from orlbuild.errors import OrlbuildError

__all__ = [
    "Answer",
    "ChatSettings",
    "JudgeRequestError",
    "JudgeUnreachableError",
    "Request",
    "ask_all",
    "shown_url",
]


class JudgeRequestError(OrlbuildError):
    """The endpoint refused a request in a way asking again will not cure (a 4xx but 429)."""


class JudgeUnreachableError(OrlbuildError):
    """No connection to the endpoint: refused, or its host name does not resolve."""


def shown_url(base_url: str) -> str:
    """``base_url`` as an error may show it: scheme, host, port and path, without any
    user name, password or query (where a key could hide)."""
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        return "the --base-url given"
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


@dataclass(frozen=True)
class ChatSettings:
    """Where and how to ask.

    Attributes
    ----------
    base_url
        The API root, e.g. ``http://127.0.0.1:8000/v1``; ``/chat/completions`` is appended.
    model
        The model name the endpoint serves.
    api_key
        The key (not shown by ``repr``); None sends no ``Authorization`` header.
    temperature, max_tokens
        Sampling settings sent with each request.
    concurrency
        Requests in flight at once.
    timeout
        Seconds per request.
    retries
        Further attempts after a retryable failure.
    backoff
        First backoff in seconds (doubled per attempt, with jitter, at most 30 s).
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 512
    concurrency: int = 8
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 0.5


@dataclass(frozen=True)
class Request:
    """One question: an opaque ``key`` the caller matches answers by, and the prompt."""

    key: str
    prompt: str


@dataclass(frozen=True)
class Answer:
    """One outcome: the reply text and tokens used, or ``error`` after the retries ran out."""

    key: str
    text: str | None
    tokens: int
    attempts: int
    error: str | None = None


@dataclass
class _Contact:
    """Whether the endpoint has answered anything in this run (one per run)."""

    reached: bool = False


def _connect_reason(error: BaseException) -> str:
    """The operating system's words for a failed connection ("connection refused", "name or
    service not known"), found down the exception chain; else the error's own message."""
    reason = str(error).strip() or type(error).__name__
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and isinstance(seen.errno, int) and seen.errno > 0:
            reason = os.strerror(seen.errno).lower()  # asyncio's own strerror names no cause
        elif isinstance(seen, OSError) and seen.strerror:  # a resolver error: its own words
            reason = seen.strerror.lower()
        seen = seen.__cause__ or seen.__context__
    return reason


def _unreachable(settings: ChatSettings, error: httpx.ConnectError, attempts: int) -> NoReturn:
    reason = _connect_reason(error)
    after = f" after {attempts} attempts" if attempts > 1 else ""
    raise JudgeUnreachableError(
        f"cannot reach the judge at {shown_url(settings.base_url)}: {reason}{after} "
        "(check --base-url and that the server is running); answers so far are kept"
    ) from None


class _Retryable(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _reply(response: httpx.Response) -> tuple[str, int]:
    """The first choice's content and the tokens used, or a retryable malformed-body failure."""
    try:
        body = response.json()
        text = body["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise _Retryable(f"malformed body ({type(error).__name__})") from None
    if not isinstance(text, str):
        raise _Retryable("malformed body (content is not text)")
    usage = body.get("usage") if isinstance(body, dict) else None
    tokens = usage.get("total_tokens", 0) if isinstance(usage, dict) else 0
    return text, int(tokens) if isinstance(tokens, int | float) else 0


async def _ask(
    client: httpx.AsyncClient, settings: ChatSettings, request: Request, contact: _Contact
) -> Answer:
    payload = {
        "model": settings.model,
        "messages": [{"role": "user", "content": request.prompt}],
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
    }
    reason = ""
    for attempt in range(settings.retries + 1):
        wait: float | None = None
        try:
            response = await client.post("/chat/completions", json=payload)
            contact.reached = True
            if response.status_code == 429:
                raise _Retryable(
                    "429 too many requests", _retry_after(response.headers.get("retry-after"))
                )
            if response.status_code >= 500:
                raise _Retryable(f"HTTP {response.status_code}")
            if response.status_code >= 400:
                raise JudgeRequestError(
                    f"the endpoint refused the request: HTTP {response.status_code} "
                    f"(check --base-url, --model and the key's variable)"
                )
            text, tokens = _reply(response)
            return Answer(request.key, text, tokens, attempt + 1)
        except _Retryable as failure:
            reason, wait = failure.reason, failure.wait
        except httpx.TimeoutException:
            reason = "timeout"
        except httpx.ConnectError as error:  # refused, or the host name does not resolve
            if not contact.reached or attempt == settings.retries:
                _unreachable(settings, error, attempt + 1)
            reason = f"connection failed ({type(error).__name__})"
        except httpx.TransportError as error:  # connection refused, dropped, reset
            reason = f"connection failed ({type(error).__name__})"
        if attempt < settings.retries:
            if wait is None:
                wait = min(30.0, settings.backoff * 2**attempt) * (0.5 + random.random() / 2)
            await asyncio.sleep(wait)
    return Answer(request.key, None, 0, settings.retries + 1, error=reason)


async def _run(
    requests: Iterator[Request], settings: ChatSettings, on_answer: Callable[[Answer], None]
) -> None:
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    limits = httpx.Limits(
        max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency
    )
    async with httpx.AsyncClient(
        base_url=settings.base_url.rstrip("/"),
        headers=headers,
        timeout=settings.timeout,
        limits=limits,
    ) as client:
        contact = _Contact()

        async def worker() -> None:
            for request in requests:  # one shared iterator: each request taken once
                on_answer(await _ask(client, settings, request, contact))

        workers = [asyncio.create_task(worker()) for _ in range(settings.concurrency)]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)


def ask_all(
    requests: Iterator[Request], settings: ChatSettings, on_answer: Callable[[Answer], None]
) -> None:
    """Ask every request, calling ``on_answer`` with each outcome as it arrives.

    Parameters
    ----------
    requests
        The questions, pulled one at a time by the workers.
    settings
        Endpoint, model, key and limits.
    on_answer
        Called in the event loop's thread for each answer (also for one whose
        retries ran out: ``error`` set, ``text`` None).

    Raises
    ------
    JudgeRequestError
        A 4xx other than 429: the run stops; answers already passed on are kept.
    JudgeUnreachableError
        No connection (refused, or the host does not resolve): at once when the
        endpoint has not answered yet, else when a request's retries run out.
    KeyboardInterrupt
        Ctrl-C: the requests in flight are cancelled; answers already passed on are kept.
    """
    asyncio.run(_run(requests, settings, on_answer))
