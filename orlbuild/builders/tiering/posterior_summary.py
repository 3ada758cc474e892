"""The build-level facts of the posterior evidence, in words (docs/tiers-and-audit.md,
"The posterior computation"): the pooled share of wrong stated orders and the line a
build that states little ends with. Shared by ``build``, ``score`` and the report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from orlbuild.records import QueryPosterior

__all__ = ["one_tier_note", "one_tier_queries", "pooled_risk", "risk_line"]


def pooled_risk(posteriors: Iterable[QueryPosterior | None]) -> tuple[float, int] | None:
    """``(sum E, sum N)`` over the queries that carry posterior evidence; ``None`` if none do."""
    known = [p for p in posteriors if p is not None]
    if not known:
        return None
    return sum(p.expected_wrong for p in known), sum(p.stated for p in known)


def risk_line(
    expected: float,
    stated: int,
    *,
    tiering: str,
    fdr: float | None,
    prior: tuple[float, float] | None,
) -> str:
    """One line: the build's posterior expected share of wrong stated orders."""
    share = f"{expected / stated:.3f}" if stated else "0 (no order stated)"
    bound = f" (bound fdr {fdr:g} per query)" if fdr is not None else " (no bound of its own)"
    fitted = "" if prior is None else f"; prior lambda {prior[0]:.3g}, tau {prior[1]:.3g}"
    return (
        f"posterior expected share of wrong stated orders, tiering {tiering}: "
        f"E/N = {expected:.1f}/{stated} = {share}{bound}{fitted}"
    )


def one_tier_queries(tier_counts: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    """``(one-tier queries, queries)`` among queries of two or more items.

    ``tier_counts`` maps a query to ``(items, tiers)``.
    """
    ordered = [tiers for items, tiers in tier_counts.values() if items >= 2]
    return sum(1 for t in ordered if t == 1), len(ordered)


def one_tier_note(tier_counts: Mapping[str, tuple[int, int]], build: str | int) -> str | None:
    """The line a build that states little ends with, or ``None``.

    Said when more than half of the queries of two or more items are one tier.
    """
    single, total = one_tier_queries(tier_counts)
    if total == 0 or 2 * single <= total:
        return None
    return (
        f"{single} of {total} queries are one tier: the judgments support no boundary there; "
        f"`orlbuild plan {build}` proposes the judgments that would."
    )
