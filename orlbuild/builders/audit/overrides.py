"""Auditor overrides of a built ORL (docs/tiers-and-audit.md, "Audit").

An override never edits a build: the store copies the build into a new,
derived build and applies one of these pure functions to the query's ORL.
Each adds a tie decision with the rule ``override: ...`` so that the audit of
the derived build shows what changed.
"""

from __future__ import annotations

from dataclasses import replace

from orlbuild.errors import ConfigError
from orlbuild.records import QueryORL, TieDecision

__all__ = ["merge_adjacent_tiers", "split_tier_at"]


def _override_decision(
    orl: QueryORL, leader: str, item: str, *, tied: bool, rule: str
) -> TieDecision:
    nan = float("nan")
    return TieDecision.without_test(
        orl.query,
        leader,
        item,
        orl.scores.get(leader, nan),
        orl.scores.get(item, nan),
        tied=tied,
        rule=rule,
    )


def merge_adjacent_tiers(orl: QueryORL, tier: int) -> QueryORL:
    """Merge tier ``tier`` with tier ``tier + 1`` (1-based).

    Parameters
    ----------
    orl
        The query's ORL (unchanged).
    tier
        The upper of the two adjacent tiers.

    Returns
    -------
    QueryORL
        A new ORL with one tier fewer.

    Raises
    ------
    ConfigError
        When ``tier`` or ``tier + 1`` does not exist.
    """
    if not 1 <= tier < len(orl.tiers):
        raise ConfigError(
            f"--merge-tiers {tier}: query {orl.query!r} has tiers 1..{len(orl.tiers)}, so T "
            f"must be between 1 and {len(orl.tiers) - 1}"
        )
    upper, lower = orl.tiers[tier - 1], orl.tiers[tier]
    tiers = [*orl.tiers[: tier - 1], upper + lower, *orl.tiers[tier + 1 :]]
    decision = _override_decision(
        orl, upper[0], lower[0], tied=True, rule=f"override: merge tiers {tier} and {tier + 1}"
    )
    return replace(orl, tiers=tiers, decisions=[*orl.decisions, decision])


def split_tier_at(orl: QueryORL, item: str) -> QueryORL:
    """Split the tier holding ``item`` so that ``item`` and the items after it open a new tier.

    Parameters
    ----------
    orl
        The query's ORL (unchanged).
    item
        An item of the ORL that is not the first of its tier.

    Raises
    ------
    ConfigError
        When the item is not in the ORL or leads its tier (nothing to split).
    """
    for number, members in enumerate(orl.tiers, start=1):
        if item in members:
            at = members.index(item)
            if at == 0:
                raise ConfigError(
                    f"--split-at {item!r}: it is the first item of tier {number} of query "
                    f"{orl.query!r}, so there is nothing above it to split from"
                )
            tiers = [*orl.tiers[: number - 1], members[:at], members[at:], *orl.tiers[number:]]
            decision = _override_decision(
                orl, members[0], item, tied=False, rule=f"override: split tier {number} at {item}"
            )
            return replace(orl, tiers=tiers, decisions=[*orl.decisions, decision])
    raise ConfigError(f"--split-at {item!r}: no such item in the ORL of query {orl.query!r}")
