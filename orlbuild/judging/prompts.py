"""The judge's prompt and the rule that reads its answer (docs/llm-judges.md, "The default prompt").

A template names the texts by placeholder: ``{query}``, ``{item_a}``, ``{item_b}``
(the texts, the item shown first is ``item_a``) and ``{query_id}``, ``{item_a_id}``,
``{item_b_id}``. Only these names are replaced; every other brace stays as written,
so a template may show JSON.
"""

from __future__ import annotations

import hashlib
import json
import re

from orlbuild.vocabulary import Verdict

__all__ = ["DEFAULT_PROMPT", "PLACEHOLDERS", "parse_verdict", "prompt_hash", "render_prompt"]

#: The default template: relevance preference between two results (docs/llm-judges.md).
DEFAULT_PROMPT = """\
You are judging search results. Given a query and two results, say which result is \
more relevant to the query: the one that better answers what the searcher wants. \
Judge the content only; the order in which the results are shown does not matter, \
and neither does their length.

Query: {query}

Result A:
{item_a}

Result B:
{item_b}

Think briefly if you need to. Then end your reply with one final line that is exactly \
"Verdict: A", "Verdict: B" or "Verdict: tie" (tie only when neither is more relevant).
"""

#: The names a template may use.
PLACEHOLDERS = ("query", "item_a", "item_b", "query_id", "item_a_id", "item_b_id")

_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")

#: The final line's verdict: an optional label, then A, B or tie, in brackets or bold.
_FINAL_LINE = re.compile(
    r"^(?:(?:final\s+)?(?:verdict|answer|winner|decision)\s*[:=\-]?\s*)?"
    r"(?:\[\[|\[|\()?\s*(a|b|tie)\s*(?:\]\]|\]|\))?\s*\.?$",
    re.IGNORECASE,
)
_JSON_FIELDS = ("verdict", "winner", "answer")
_WORDS = {"a": Verdict.a, "b": Verdict.b, "tie": Verdict.tie}


def render_prompt(template: str, values: dict[str, str]) -> str:
    """The template with its placeholders replaced by ``values`` (missing names: empty).

    Parameters
    ----------
    template
        The prompt template.
    values
        Placeholder name -> text.

    Returns
    -------
    str
    """
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), ""), template)


def prompt_hash(template: str) -> str:
    """SHA-256 of the template: part of the cache key (docs/llm-judges.md, "Cache and resume")."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


def parse_verdict(answer: str) -> Verdict:
    """The verdict an answer states (docs/llm-judges.md, "Parsing the answer").

    1. When the whole answer (code fences removed) is a JSON object with a
       ``verdict``, ``winner`` or ``answer`` field, that field says it.
    2. Otherwise the last non-empty line, with Markdown emphasis removed, must
       be ``A``, ``B`` or ``tie``, optionally after ``Verdict:`` (or
       ``Answer:``, ``Winner:``, ``Decision:``, ``Final verdict:``) and
       optionally in brackets (``[[A]]``).

    Anything else is :attr:`Verdict.unparseable`: never guessed.

    Parameters
    ----------
    answer
        The model's reply.

    Returns
    -------
    Verdict
    """
    text = answer.strip()
    unfenced = re.sub(r"^```(?:json)?\s*|\s*```$", "", text, flags=re.IGNORECASE)
    if unfenced.startswith("{"):
        try:
            document = json.loads(unfenced)
        except ValueError:
            document = None
        if isinstance(document, dict):
            for field in _JSON_FIELDS:
                value = document.get(field)
                if isinstance(value, str) and value.strip().lower() in _WORDS:
                    return _WORDS[value.strip().lower()]
            return Verdict.unparseable
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return Verdict.unparseable
    last = re.sub(r"[*_`#>\"']", "", lines[-1]).strip()
    match = _FINAL_LINE.match(last)
    return _WORDS[match.group(1).lower()] if match else Verdict.unparseable
