"""The documented limits of orlbuild's options and data, checked before any work starts.

README, "Limits" lists them with what they imply. Every front end (the CLI
options, the TOML pipeline, the services) checks through these functions, so a
value out of range is one line naming the option, the value and the limit,
before a file is read or a build computed. This module imports nothing but
:mod:`orlbuild.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping

from orlbuild.errors import ConfigError

__all__ = [
    "NAME_MAX",
    "PAIRWISE_ITEMS_MAX",
    "PERMUTATIONS_MAX",
    "SEED_MAX",
    "check_items_per_query",
    "check_name",
    "check_permutations",
    "check_seed",
    "pairwise_matrix_bytes",
]

#: Largest seed: seeds are stored in a 32-bit signed integer column (builds), and every
#: random generator accepts it.
SEED_MAX = 2**31 - 1

#: Longest name (build, system, collection, auditor): the store's name columns.
NAME_MAX = 512

#: Most permutations (sign flips) of a randomization test or a power analysis. A p-value
#: resolution of 1e-6 is beyond any alpha in use; each permutation costs a pass over the
#: per-query scores of every pair, so 10**12 would run for days.
PERMUTATIONS_MAX = 1_000_000

#: Most items in one query for the pairwise routes (bt, plackett-luce, rank-centrality):
#: they hold dense item-by-item matrices (comparison counts, the Markov chain, the Fisher
#: information and its inverse), 8 * n**2 bytes each: 200 MB at 5,000 items.
PAIRWISE_ITEMS_MAX = 5_000

#: Dense item-by-item matrices a pairwise route holds at its peak (see README, "Limits").
_MATRICES_AT_PEAK = 4


def check_seed(value: int, option: str = "--seed") -> int:
    """``value`` when it is a whole number in ``[0, SEED_MAX]``; else one ConfigError line.

    Parameters
    ----------
    value
        The seed given.
    option
        How the user named it (``--seed``, ``compare.seed``).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SEED_MAX:
        raise ConfigError(f"{option} must be a whole number from 0 to {SEED_MAX} (got {value!r})")
    return value


def check_name(value: str | None, option: str) -> str | None:
    """``value`` stripped, when it has 1 to :data:`NAME_MAX` characters (``None`` passes)."""
    if value is None:
        return None
    name = value.strip()
    if not name or len(name) > NAME_MAX:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise ConfigError(
            f"{option} must have 1 to {NAME_MAX} characters (got {len(value)}: {shown!r})"
        )
    return name


def check_permutations(value: int, option: str = "--permutations") -> int:
    """``value`` when it is in ``[1, PERMUTATIONS_MAX]``; else one ConfigError line."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= PERMUTATIONS_MAX:
        raise ConfigError(
            f"{option} must be from 1 to {PERMUTATIONS_MAX:,} (got {value!r}); more "
            "permutations do not make a p-value more useful, only the run longer"
        )
    return value


def pairwise_matrix_bytes(items: int) -> int:
    """Memory a pairwise route needs for a query of ``items`` items, at its peak (bytes)."""
    return _MATRICES_AT_PEAK * 8 * items * items


def check_items_per_query(items: Mapping[str, int], method: str) -> None:
    """Refuse a pairwise-route build with a query above :data:`PAIRWISE_ITEMS_MAX` items.

    Parameters
    ----------
    items
        Distinct items per query.
    method
        The resolved build method (named in the message).
    """
    over = {q: n for q, n in items.items() if n > PAIRWISE_ITEMS_MAX}
    if not over:
        return
    query, count = max(over.items(), key=lambda pair: pair[1])
    gib = pairwise_matrix_bytes(count) / 2**30
    more = f" (and {len(over) - 1} more queries)" if len(over) > 1 else ""
    raise ConfigError(
        f"query {query!r} has {count:,} items{more}; the {method} route holds dense "
        f"item-by-item matrices (about {gib:,.1f} GiB for this query) and is limited to "
        f"{PAIRWISE_ITEMS_MAX:,} items per query; split the query or use --source graded"
    )
