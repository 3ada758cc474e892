"""``orlbuild judge``: fill a plan file from an LLM judge (docs/llm-judges.md, "LLM judges").

Reads the plan (TSV, CSV or JSONL with the text columns of ``plan --with-text``)
one row at a time, asks each pair in the orders ``--orders`` names, caches every
parsed answer (:mod:`orlbuild.judging.answer_cache`), then writes the answered
file in the arena shape (``item_a`` is the item shown first, so ``winner_first``
is known; ``annotator`` is ``llm:<model>``) and the raw answers in a sidecar
JSONL. Nothing here holds more than one plan row and the requests in flight, so
memory does not grow with the plan.

Where the pairs come from is a :class:`PlanSource`: anything that yields the plan's
rows, in the same order each time it is asked (it is read twice: to ask, then to
write in plan order). :class:`PlanFile` reads a plan file; a round of the store
(``orlbuild judge --round R``, once rounds exist) plugs in as another source.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from orlbuild.errors import ConfigError, InputError
from orlbuild.judging.answer_cache import AnswerCache, cache_key
from orlbuild.judging.chat_client import Answer, ChatSettings, Request, ask_all
from orlbuild.judging.prompts import DEFAULT_PROMPT, parse_verdict, prompt_hash, render_prompt
from orlbuild.vocabulary import Disagreement, JudgeOrders, Verdict

__all__ = [
    "JudgeOptions",
    "JudgeSummary",
    "PlanFile",
    "PlanRow",
    "PlanSource",
    "judge_plan",
    "read_plan_rows",
    "sidecar_path",
]

_REQUIRED = ("query", "item_a", "item_b")
_TEXTS = ("query_text", "item_a_text", "item_b_text")
ANSWERED_COLUMNS = ("query", "annotator", "item_a", "item_b", "winner")


@dataclass(frozen=True)
class PlanRow:
    """One planned pair with its texts (empty when the plan has none)."""

    query: str
    item_a: str
    item_b: str
    query_text: str
    item_a_text: str
    item_b_text: str


@dataclass(frozen=True)
class JudgeOptions:
    """What ``orlbuild judge`` was asked (docs/commands.md, ``judge``).

    ``chat`` is where and how to ask, without a key: ``api_key_env`` names the
    variable holding it, read when the run starts and kept only in the
    client's headers.
    """

    chat: ChatSettings
    api_key_env: str | None = None
    prompt: Path | None = None
    orders: JudgeOrders = JudgeOrders.both
    disagreement: Disagreement = Disagreement.keep
    seed: int = 0
    cache: Path | None = None


@dataclass
class JudgeSummary:
    """What a run did: counts, tokens, time and the files written."""

    pairs: int = 0
    questions: int = 0
    cached: int = 0
    asked: int = 0
    unparseable: int = 0
    failed: int = 0
    tokens: int = 0
    seconds: float = 0.0
    rows_written: int = 0
    interrupted: bool = False
    output: Path | None = None
    sidecar: Path | None = None
    cache: Path | None = None
    last_error: str | None = None


def sidecar_path(output: Path) -> Path:
    """The raw answers' JSONL beside ``output``: ``<output>.answers.jsonl``."""
    return output.with_name(output.name + ".answers.jsonl")


def _suffix(path: Path) -> str:
    name = path.name.lower().removesuffix(".gz")
    return name.rsplit(".", 1)[-1] if "." in name else "tsv"


def read_plan_rows(path: Path) -> Iterator[PlanRow]:
    """The plan's rows, one at a time (TSV, CSV or JSONL by extension).

    Raises
    ------
    InputError
        A missing column or field, naming the file and line.
    """
    kind = _suffix(path)
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as error:
        raise InputError(f"cannot read the plan: {error.strerror}", file=path) from None
    with handle:
        if kind == "jsonl":
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    raise InputError("not a JSON object", file=path, line=number) from None
                yield _row(record, path, number)
            return
        reader = csv.DictReader(handle, delimiter="," if kind == "csv" else "\t")
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(
                f"the plan has no {', '.join(missing)} column",
                file=path,
                line=1,
                hint="write it with orlbuild plan --with-text",
            )
        for number, record in enumerate(reader, start=2):
            yield _row(record, path, number)


def _row(record: object, path: Path, line: int) -> PlanRow:
    if not isinstance(record, dict):
        raise InputError("not a JSON object", file=path, line=line)
    values = {}
    for column in (*_REQUIRED, *_TEXTS):
        value = record.get(column)
        if column in _REQUIRED and (value is None or not str(value).strip()):
            raise InputError(f"{column} is empty", file=path, line=line)
        values[column] = "" if value is None else str(value).strip()
    return PlanRow(**values)


def _orders(row: PlanRow, orders: JudgeOrders, seed: int) -> tuple[bool, ...]:
    """Which orders to ask: True is ``item_a`` shown first. ``random`` draws one per pair,
    from a hash of the seed and the pair, so a resumed run draws the same."""
    if orders is JudgeOrders.both:
        return (True, False)
    digest = hashlib.sha256(f"{seed}\x1f{row.query}\x1f{row.item_a}\x1f{row.item_b}".encode())
    return (digest.digest()[0] % 2 == 0,)


def _shown(row: PlanRow, a_first: bool) -> tuple[str, str, str, str]:
    """(first id, first text, second id, second text)."""
    if a_first:
        return row.item_a, row.item_a_text, row.item_b, row.item_b_text
    return row.item_b, row.item_b_text, row.item_a, row.item_a_text


def _api_key(name: str | None) -> str | None:
    if name is None:
        return None
    key = os.environ.get(name)
    if not key:
        raise ConfigError(f"--api-key-env {name}: the variable {name} is not set or empty")
    return key


class PlanSource(Protocol):
    """The pairs to judge: :meth:`rows` yields them, in the same order on every call."""

    def rows(self) -> Iterator[PlanRow]:
        """The plan's rows, one at a time."""
        ...


@dataclass(frozen=True)
class PlanFile:
    """A plan file written by ``orlbuild plan --with-text`` (:func:`read_plan_rows`)."""

    path: Path

    def rows(self) -> Iterator[PlanRow]:
        """The file's rows, one at a time."""
        return read_plan_rows(self.path)


def judge_plan(
    plan: Path | PlanSource,
    output: Path,
    options: JudgeOptions,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> JudgeSummary:
    """Ask the judge every planned pair not answered yet, and write the answered file.

    Parameters
    ----------
    plan
        The plan file (``orlbuild plan --with-text``), or any :class:`PlanSource`.
    output
        The answered file (arena shape; TSV, CSV or JSONL by extension); the raw
        answers go to :func:`sidecar_path`.
    options
        Endpoint, model, prompt, limits, orders.
    progress
        Called with (answers, tokens) after each answer.

    Returns
    -------
    JudgeSummary
        ``interrupted`` is True after Ctrl-C: the files then hold what was answered.

    Raises
    ------
    ConfigError
        The key's variable is unset, or the prompt cannot be read.
    InputError
        A bad plan row.
    JudgeRequestError
        The endpoint refused a request (a 4xx but 429); what was answered is kept.
    """
    source = PlanFile(plan) if isinstance(plan, Path) else plan
    template = DEFAULT_PROMPT
    if options.prompt is not None:
        try:
            template = options.prompt.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"--prompt {options.prompt}: {error.strerror}") from None
    settings = replace(options.chat, api_key=_api_key(options.api_key_env))
    digest = prompt_hash(template)
    summary = JudgeSummary(output=output, sidecar=sidecar_path(output))
    summary.cache = options.cache or output.with_name(output.name + ".cache.sqlite")
    started = time.perf_counter()
    with AnswerCache(summary.cache) as cache:

        def key(row: PlanRow, first: str, second: str) -> str:
            return cache_key(
                options.chat.base_url, options.chat.model, digest, row.query, first, second
            )

        def requests() -> Iterator[Request]:
            for row in source.rows():
                summary.pairs += 1
                for a_first in _orders(row, options.orders, options.seed):
                    summary.questions += 1
                    first, first_text, second, second_text = _shown(row, a_first)
                    k = key(row, first, second)
                    if cache.get(k) is not None:
                        summary.cached += 1
                        continue
                    values = {
                        "query": row.query_text,
                        "item_a": first_text,
                        "item_b": second_text,
                        "query_id": row.query,
                        "item_a_id": first,
                        "item_b_id": second,
                    }
                    yield Request(k, render_prompt(template, values))

        def on_answer(answer: Answer) -> None:
            if answer.text is None:
                summary.failed += 1
                summary.last_error = answer.error
                return
            verdict = parse_verdict(answer.text)
            summary.asked += 1
            summary.tokens += answer.tokens
            cache.put(answer.key, answer.text, verdict.value, answer.tokens)
            if progress is not None:
                progress(summary.asked, summary.tokens)

        try:
            ask_all(requests(), settings, on_answer)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            cache.commit()
            summary.seconds = time.perf_counter() - started
            _write(source, output, options, cache, key, summary)
    return summary


def _write(
    source: PlanSource,
    output: Path,
    options: JudgeOptions,
    cache: AnswerCache,
    key: Callable[[PlanRow, str, str], str],
    summary: JudgeSummary,
) -> None:
    """The answered file and the sidecar, in plan order, from the cache (docs/llm-judges.md,
    "Output"). A pair whose two orders disagree is written as answered (``keep``) or as one
    tie (``tie``); an unparseable answer is only in the sidecar."""
    annotator = f"llm:{options.chat.model}"
    kind = _suffix(output)
    summary.unparseable = summary.rows_written = 0
    tmp_out = output.with_name(output.name + ".tmp")
    tmp_side = sidecar_path(output).with_name(sidecar_path(output).name + ".tmp")
    with (
        tmp_out.open("w", encoding="utf-8", newline="") as out,
        tmp_side.open("w", encoding="utf-8") as side,
    ):
        writer = None
        if kind != "jsonl":
            writer = csv.writer(out, delimiter="," if kind == "csv" else "\t", lineterminator="\n")
            writer.writerow(ANSWERED_COLUMNS)
        for row in source.rows():
            answered: list[tuple[str, str, str]] = []  # (first, second, winner id or "tie")
            for a_first in _orders(row, options.orders, options.seed):
                first, _, second, _ = _shown(row, a_first)
                cached = cache.get(key(row, first, second))
                if cached is None:
                    continue
                text, word, tokens = cached
                side.write(
                    json.dumps(
                        {
                            "query": row.query,
                            "item_a": first,
                            "item_b": second,
                            "annotator": annotator,
                            "verdict": word,
                            "tokens": tokens,
                            "answer": text,
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
                verdict = Verdict(word)
                if verdict is Verdict.unparseable:
                    summary.unparseable += 1
                    continue
                winner = {Verdict.a: first, Verdict.b: second}.get(verdict, "tie")
                answered.append((first, second, winner))
            if (
                options.disagreement is Disagreement.tie
                and len(answered) == 2
                and answered[0][2] != answered[1][2]
            ):
                answered = [(row.item_a, row.item_b, "tie")]
            for first, second, winner in answered:
                word = "tie" if winner == "tie" else ("a" if winner == first else "b")
                values = (row.query, annotator, first, second, word)
                if writer is None:
                    out.write(json.dumps(dict(zip(ANSWERED_COLUMNS, values, strict=True))) + "\n")
                else:
                    writer.writerow(values)
                summary.rows_written += 1
    tmp_out.replace(output)
    tmp_side.replace(sidecar_path(output))
