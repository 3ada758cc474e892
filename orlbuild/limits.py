"""The documented limits of orlbuild's options and data, checked before any work starts.

docs/reliability.md, "Limits" lists them with what they imply. Every front end (the CLI
options, the TOML pipeline, the services) checks through these functions, so a
value out of range is one line naming the option, the value and the limit,
before a file is read or a build computed. This module imports nothing but
:mod:`orlbuild.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from orlbuild.errors import ConfigError

__all__ = [
    "BUILD_MEMORY_MAX",
    "COUNT_LIMITS",
    "ITEMS_PER_QUERY_MAX",
    "NAME_MAX",
    "PAIRWISE_ROUTES",
    "PERMUTATIONS_MAX",
    "SEED_MAX",
    "CountLimit",
    "check_count",
    "check_items_per_query",
    "check_name",
    "check_permutations",
    "check_seed",
    "count_problem",
    "items_per_query_limit",
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

#: Most items in one query of a pairwise-route build, whatever the memory allows: the
#: strength fit and the covariance grow with the cube of the items (a 1,000-item query
#: took about 4 minutes on a loaded test machine, docs/reliability.md, "Limits").
ITEMS_PER_QUERY_MAX = 5_000

#: Peak bytes of one query, measured (tracemalloc, ``tests/benchmarks/bench_query_memory.py``):
#: dense n x n arrays (about 80 bytes * n**2); the simultaneous tiering's Monte Carlo
#: draws of the scores (float32 normals and their float64 image: 12 bytes * draws * n)
#: and one block of its null (``NULL_BLOCK_BYTES``); a bootstrap's samples and their
#: centred copy (16 bytes * resamples * n) and one block of its pairwise differences.
_DENSE_MATRICES = 80
_BYTES_PER_DRAW_AND_ITEM = 12
_BYTES_PER_RESAMPLE_AND_ITEM = 16
#: One block of the Monte Carlo null or of the bootstrap differences (the builders'
#: ``NULL_BLOCK_BYTES`` and ``BOOTSTRAP_BLOCK_BYTES``; this module imports no builder).
_BLOCK_BYTES = 64 * 2**20

#: The routes that hold item-by-item arrays (pairwise or listwise judgments).
PAIRWISE_ROUTES = frozenset({"bt", "plackett-luce", "rank-centrality"})


def _duration(seconds: float) -> str:
    """``about 3 days``: a rough duration for a limit's message."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"about {seconds / size:,.0f} {unit}"
    return f"about {seconds:,.0f} seconds"


def _gib(size: float) -> str:
    return f"{size / 2**30:,.1f} GiB"


@dataclass(frozen=True)
class CountLimit:
    """A count option that sizes the work: its range and what a value would cost.

    Attributes
    ----------
    option
        How the CLI names it (``--mc-draws``).
    low, high
        The accepted range, both included.
    cost
        ``cost(value)``: the memory or time ``value`` would imply, for the message.
    why
        Why more is not useful.
    """

    option: str
    low: int
    high: int
    cost: Callable[[int], str]
    why: str


#: The count options that size work, by their TOML key (docs/reliability.md, "Limits").
#: Time figures come from docs/performance.md (measured with other jobs running).
COUNT_LIMITS: Mapping[str, CountLimit] = MappingProxyType(
    {
        "permutations": CountLimit(
            "--permutations", 1, PERMUTATIONS_MAX,
            lambda v: f"{_duration(v * 1.3e-4)} per test of 63 systems over 50 queries "
            "(max-t: 1.3 s per 10,000)",
            "a p-value resolution of 1e-6 is beyond any alpha in use",
        ),
        "subsamples": CountLimit(
            "--subsamples", 1, 100_000,
            lambda v: f"{v:,} tests per budget and measure, {_duration(v * 0.087)} per budget "
            "and measure at 63 systems (300 max-t tests took 26 s)",
            "the power at a budget is a share, known to 0.002 at 100,000 subsets",
        ),
        "mc_draws": CountLimit(
            "--mc-draws", 100, 100_000,
            lambda v: f"{_gib(_BYTES_PER_DRAW_AND_ITEM * v * 1000)} of Monte Carlo draws "
            f"and {v * 1000 * 999 // 2:,} null statistics for a 1,000-item query",
            "a critical value's level is then known to 0.0007",
        ),
        "bootstrap": CountLimit(
            "--bootstrap", 2, 10_000,
            lambda v: f"{v:,} refits of every query, "
            f"{_gib(_BYTES_PER_RESAMPLE_AND_ITEM * v * 1000)} of resampled scores for a "
            "1,000-item query",
            "percentile intervals and p-values are then known to 0.005",
        ),
        "reference_resamples": CountLimit(
            "--reference-resamples", 0, 10_000,
            lambda v: f"{v:,} rebuilds of every ORL, {_duration(v * 1.0)} for 36 queries "
            "(about 1 s per resample)",
            "a verdict's share of resamples is then known to 0.005",
        ),
    }
)  # fmt: skip


def count_problem(name: str, value: int) -> str | None:
    """What is wrong with ``value`` for the count ``name`` (``None``: nothing); the caller
    names the option and the value (the TOML adds ``(got VALUE)``).

    Parameters
    ----------
    name
        A key of :data:`COUNT_LIMITS`.
    value
        The value given.
    """
    limit = COUNT_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be a whole number from {limit.low:,} to {limit.high:,}"
    if value < limit.low:
        return f"must be >= {limit.low}"
    if value > limit.high:
        return (
            f"must be at most {limit.high:,}: {value:,} would mean {limit.cost(value)}; {limit.why}"
        )
    return None


def check_count(name: str, value: int, option: str | None = None) -> int:
    """``value`` when it is within the limit of the count ``name``; else one ConfigError line.

    Parameters
    ----------
    name
        A key of :data:`COUNT_LIMITS` (``permutations``, ``subsamples``, ``mc_draws``,
        ``bootstrap``, ``reference_resamples``).
    value
        The value given.
    option
        How the user named it (default the CLI option, e.g. ``--mc-draws``).

    Raises
    ------
    ConfigError
        Naming the option, the value, the limit and the memory or time it would imply.
    """
    problem = count_problem(name, value)
    if problem is not None:
        raise ConfigError(f"{option or COUNT_LIMITS[name].option} {problem} (got {value!r})")
    return value


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
        Bytes, from the measured costs (docs/reliability.md, "Limits"): the Monte
        Carlo null and the bootstrap differences are computed a block at a time, so
        they add one block, not ``draws x n**2``.
    """
    peak = _DENSE_MATRICES * items * items
    blocked = False
    if uncertainty == "bootstrap":
        peak += _BYTES_PER_RESAMPLE_AND_ITEM * bootstrap * items
        blocked = True
    elif tiering == "simultaneous":
        peak += _BYTES_PER_DRAW_AND_ITEM * mc_draws * items
    if tiering == "simultaneous":
        blocked = True
    return peak + (_BLOCK_BYTES if blocked else 0)


def items_per_query_limit(*, tiering: str, uncertainty: str, mc_draws: int, bootstrap: int) -> int:
    """The most items one query may have with these options: within 4 GiB and
    :data:`ITEMS_PER_QUERY_MAX`."""

    def fits(n: int) -> bool:
        return (
            pairwise_peak_bytes(
                n, tiering=tiering, uncertainty=uncertainty, mc_draws=mc_draws, bootstrap=bootstrap
            )
            <= BUILD_MEMORY_MAX
        )

    low, high = 1, ITEMS_PER_QUERY_MAX
    if fits(high):
        return high
    while low < high:  # the peak grows with the items: the largest n that fits
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


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
    return check_count("permutations", value, option)


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
    limit = items_per_query_limit(
        tiering=tiering, uncertainty=uncertainty, mc_draws=mc_draws, bootstrap=bootstrap
    )
    query, count = max(items.items(), key=lambda pair: pair[1])
    if count <= limit:
        return
    need = pairwise_peak_bytes(
        count, tiering=tiering, uncertainty=uncertainty, mc_draws=mc_draws, bootstrap=bootstrap
    )
    over = sum(1 for n in items.values() if n > limit)
    more = f" (and {over - 1} more queries)" if over > 1 else ""
    cause = (
        f"the limit is {_gib(BUILD_MEMORY_MAX).replace('.0 ', ' ')} per query, {limit:,} items "
        "with these options; split the query, or lower the cost (--tiering model or leader, "
        "fewer --mc-draws or --bootstrap)"
        if limit < ITEMS_PER_QUERY_MAX
        else f"the limit is {ITEMS_PER_QUERY_MAX:,} items per query (the fit grows with the "
        "cube of the items); split the query"
    )
    raise ConfigError(
        f"query {query!r} has {count:,} items{more}: a {method} build with tiering {tiering} "
        f"would need about {_gib(need)} for it; {cause}"
    )
