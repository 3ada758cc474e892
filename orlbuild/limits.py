"""The documented limits of orlbuild's options and data, checked before any work starts.

docs/reliability.md, "Limits" lists them with what they imply. Every front end (the CLI
options, the TOML pipeline, the services) checks through these functions, so a
value out of range is one line naming the option, the value and the limit,
before a file is read or a build computed. This module imports nothing but
:mod:`orlbuild.errors`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from orlbuild.errors import ConfigError

__all__ = [
    "BUILD_MEMORY_MAX",
    "NAME_MAX",
    "PAIRWISE_ROUTES",
    "PERMUTATIONS_MAX",
    "SEED_MAX",
    "check_items_per_query",
    "check_name",
    "check_permutations",
    "check_seed",
    "pairwise_peak_bytes",
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

#: Memory one query of a pairwise-route build may need at its peak (bytes): 4 GiB.
BUILD_MEMORY_MAX = 4 * 2**30

#: Peak bytes per squared item, measured (tracemalloc, one query, docs/reliability.md, "Limits"):
#: the simultaneous tiering's Monte Carlo null holds ``draws x pairs`` values in a few
#: copies (about 6 bytes * draws * n**2); a bootstrap holds ``resamples x pairs``
#: (about 16 bytes * resamples * n**2); otherwise dense n x n arrays (about 80 bytes * n**2).
_BYTES_PER_DRAW = 6
_BYTES_PER_RESAMPLE = 16
_DENSE_MATRICES = 80

#: The routes that hold item-by-item arrays (pairwise or listwise judgments).
PAIRWISE_ROUTES = frozenset({"bt", "plackett-luce", "rank-centrality"})


def pairwise_peak_bytes(
    items: int, *, tiering: str, uncertainty: str, mc_draws: int, bootstrap: int
) -> int:
    """Estimated peak memory of a pairwise-route build of one query of ``items`` items.

    Parameters
    ----------
    items
        Items in the query.
    tiering, uncertainty
        The resolved ``--tiering`` and ``--uncertainty``.
    mc_draws, bootstrap
        ``--mc-draws`` and ``--bootstrap``.

    Returns
    -------
    int
        Bytes, from the measured per-item-pair costs (docs/reliability.md, "Limits").
    """
    squared = items * items
    per_pair = _DENSE_MATRICES
    if uncertainty == "bootstrap":
        per_pair = max(per_pair, _BYTES_PER_RESAMPLE * bootstrap)
    if tiering == "simultaneous":
        per_pair = max(
            per_pair, _BYTES_PER_DRAW * (bootstrap if uncertainty == "bootstrap" else mc_draws)
        )
    return per_pair * squared


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


def check_items_per_query(
    items: Mapping[str, int],
    *,
    method: str,
    tiering: str,
    uncertainty: str,
    mc_draws: int,
    bootstrap: int,
) -> None:
    """Refuse a pairwise-route build whose largest query would need more than 4 GiB.

    Parameters
    ----------
    items
        Distinct items per query.
    method, tiering, uncertainty, mc_draws, bootstrap
        The resolved build options (the memory depends on them).

    Raises
    ------
    ConfigError
        Naming the query, its items, the estimated memory, the limit in items for
        these options and what lowers it.
    """
    if method not in PAIRWISE_ROUTES or not items:
        return

    def peak(n: int) -> int:
        return pairwise_peak_bytes(
            n, tiering=tiering, uncertainty=uncertainty, mc_draws=mc_draws, bootstrap=bootstrap
        )

    query, count = max(items.items(), key=lambda pair: pair[1])
    need = peak(count)
    if need <= BUILD_MEMORY_MAX:
        return
    per_item_pair = peak(1)
    limit = math.isqrt(BUILD_MEMORY_MAX // per_item_pair)
    over = sum(1 for n in items.values() if n > limit)
    more = f" (and {over - 1} more queries)" if over > 1 else ""
    raise ConfigError(
        f"query {query!r} has {count:,} items{more}: a {method} build with tiering {tiering} "
        f"would need about {need / 2**30:,.1f} GiB for it; the limit is "
        f"{BUILD_MEMORY_MAX / 2**30:.0f} GiB per query, {limit:,} items with these options; "
        "split the query, or lower the cost (--tiering model or leader, fewer --mc-draws)"
    )
