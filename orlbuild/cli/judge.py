"""``orlbuild judge PLAN_FILE -o ANSWERED_FILE``: an LLM judge fills a plan (docs/llm-judges.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orlbuild.cli.render import say
from orlbuild.vocabulary import Disagreement, JudgeOrders

__all__ = ["register"]


def judge_command(
    plan: Annotated[Path, typer.Argument(help="Plan file with texts (orlbuild plan --with-text).")],
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="Answered file, arena shape (tsv, csv or jsonl by extension); raw answers "
            "beside it in OUTPUT.answers.jsonl.",
        ),
    ],
    base_url: Annotated[
        str,
        typer.Option(
            help="API root of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."
        ),
    ],
    model: Annotated[str, typer.Option(help="Model name; the annotator is llm:MODEL.")],
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the API key (never printed or stored)."),
    ] = None,
    prompt: Annotated[
        Path | None,
        typer.Option(help="Prompt template with {query}, {item_a}, {item_b} (default: relevance)."),
    ] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Tokens per answer at most.")] = 512,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight at once.")] = 8,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds per request.")] = 60.0,
    retries: Annotated[
        int, typer.Option(min=0, help="Retries on 429, 5xx, timeouts and dropped connections.")
    ] = 5,
    orders: Annotated[
        JudgeOrders,
        typer.Option(help="both: each pair in both orders; random: one order per pair."),
    ] = JudgeOrders.both,
    disagreement: Annotated[
        Disagreement,
        typer.Option(help="Two orders that disagree: keep both judgments, or write one tie."),
    ] = Disagreement.keep,
    seed: Annotated[int, typer.Option(help="Seed of --orders random.")] = 0,
    cache: Annotated[
        Path | None,
        typer.Option(
            help="Answer cache (default OUTPUT.cache.sqlite); a rerun asks only what it lacks."
        ),
    ] = None,
) -> None:
    """Ask an LLM judge each planned pair, in both presentation orders, and write its answers.

    Answers are cached by endpoint, model, prompt, pair and order, so an
    interrupted run resumes where it stopped; Ctrl-C keeps what was answered.
    Ingest the output with orlbuild ingest pairwise, like any person's.
    """
    from orlbuild.judging.chat_client import ChatSettings
    from orlbuild.progress import answer_progress
    from orlbuild.services.judging import JudgeOptions, judge_plan

    chat = ChatSettings(
        base_url=base_url,
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
    )
    options = JudgeOptions(
        chat=chat,
        api_key_env=api_key_env,
        prompt=prompt,
        orders=orders,
        disagreement=disagreement,
        seed=seed,
        cache=cache,
    )
    with answer_progress(f"judging with {model}") as update:
        summary = judge_plan(plan, output, options, progress=update)
    say(
        f"{summary.pairs} pairs, {summary.questions} questions: {summary.asked} asked, "
        f"{summary.cached} from the cache, {summary.unparseable} unparseable, "
        f"{summary.failed} failed after retries; {summary.tokens} tokens, "
        f"{summary.seconds:.1f} s; {summary.rows_written} rows in {output}"
    )
    if summary.failed:
        say(f"last failure: {summary.last_error}; run again to ask the failed ones")
    if summary.interrupted:
        say(f"interrupted: the answers so far are kept in {summary.cache}; run again to resume")
        raise typer.Exit(130)


def register(app: typer.Typer) -> None:
    """Add ``judge`` to the root application."""
    app.command("judge")(judge_command)
