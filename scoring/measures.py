"""Measure definitions, their registry, and the one parser for measure names.

A measure is a frozen dataclass holding its validated parameters (the
*definition*); it computes a query with the readable per-query functions of
:mod:`scoring.rank_deviation` / :mod:`scoring.baselines` and many queries with a
vectorised ``batch`` kernel over :class:`scoring.batch.BatchData` (the
*computation*). Names follow ir_measures' style: ``nDCG@10``,
``RBP(p=0.8)@10``, ``RDQ(penalty=m2,alpha=2)@10``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, Literal, cast

import numpy as np

from scoring import baselines, trec_measures
from scoring.batch import BatchData
from scoring.errors import ScoringError, UnknownMeasureError
from scoring.orl import ORL
from scoring.penalties import BUILT_IN_PENALTIES, PENALTIES, get_penalty
from scoring.rank_deviation import rdq
from scoring.relevance_level import check_level, orl_at_level
from scoring.weights import WEIGHT_PRESETS, Weights, resolve_weights

__all__ = [
    "ALIASES",
    "AP",
    "CMP",
    "ERR",
    "MEASURES",
    "RBP",
    "RDQ",
    "RR",
    "Bpref",
    "Hits",
    "IPrec",
    "Judged",
    "KendallTau",
    "Measure",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "R",
    "Rprec",
    "SpearmanRho",
    "Success",
    "infAP",
    "nDCG",
    "parse_measure",
    "parse_measures",
    "with_rel_level",
]


def _fmt(value: Any) -> str:
    """Format a parameter value for a canonical name."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass(frozen=True)
class Measure:
    """Base class of every measure: a cutoff plus the measure's own parameters.

    Calling a measure evaluates one query: ``measure(orl, ranking) -> float``.
    ``str(measure)`` is its canonical name, which :func:`parse_measure` reads
    back to an equal measure.
    """

    cutoff: int | None = None

    #: Registry name (the part before parameters and ``@k``).
    NAME: ClassVar[str] = ""
    #: One-line description for ``orlbuild measures``.
    DESCRIPTION: ClassVar[str] = ""
    #: Parameter name -> converter from the string form in a measure name.
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {}
    #: Whether the measure needs ``@k``.
    NEEDS_CUTOFF: ClassVar[bool] = False
    #: Whether the measure accepts ``@k`` as a cutoff at all.
    TAKES_CUTOFF: ClassVar[bool] = True
    #: A parameter that ``@value`` sets instead of a cutoff (ir_measures' ``AT_PARAM``).
    AT_PARAM: ClassVar[str | None] = None
    #: Value range, for documentation and property tests.
    RANGE: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: How the ``all`` row combines the queries' values: ``mean``, or ``sum`` for the
    #: counting measures (trec_eval sums ``num_ret``, ``num_rel``, ``num_rel_ret``).
    AGGREGATE: ClassVar[Literal["mean", "sum"]] = "mean"

    def __post_init__(self) -> None:
        if self.cutoff is None:
            if self.NEEDS_CUTOFF:
                raise ScoringError(f"{self.NAME} needs a cutoff, e.g. {self.NAME}@10")
        elif not self.TAKES_CUTOFF:
            raise ScoringError(f"{self.NAME} takes no cutoff (it reads the whole candidate)")
        elif isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int) or self.cutoff < 1:
            raise ScoringError(
                f"cutoff of {self.NAME} must be an integer >= 1, got {self.cutoff!r}"
            )

    @classmethod
    def pattern(cls) -> str:
        """The name with its ``@`` part as ``orlbuild measures`` lists it: ``P@k``, ``AP[@k]``."""
        if cls.AT_PARAM is not None:
            return f"{cls.NAME}@{cls.AT_PARAM[0]}"
        if not cls.TAKES_CUTOFF:
            return cls.NAME
        return cls.NAME + ("@k" if cls.NEEDS_CUTOFF else "[@k]")

    # --- evaluation -------------------------------------------------------------------
    def __call__(self, orl: ORL, ranking: Sequence[str]) -> float:
        """Evaluate one query (the readable reference path)."""
        return self.compute(orl, list(ranking))

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        """Per-query value; implemented by each measure."""
        raise NotImplementedError

    def batch(self, data: BatchData) -> np.ndarray:
        """Values for every row of ``data``; implemented by each measure."""
        raise NotImplementedError

    def depth(self, longest_run: int, largest_orl: int) -> int:
        """Positions the batch kernel needs laid out."""
        return self.cutoff if self.cutoff is not None else max(longest_run, 1)

    def _k(self, data: BatchData) -> int:
        """The cutoff in effect for a batch."""
        return self.cutoff if self.cutoff is not None else data.depth

    # --- naming -----------------------------------------------------------------------
    def spelled_out(self) -> str:
        """The full name, which no change of a default can change (what a stored score records).

        The canonical name for every measure except nDCG, whose bare name
        stands for ``nDCG(grade=auto,gain=linear)`` (docs/measures.md, "Baselines").
        """
        return str(self)

    def resolved(self, orls: Sequence[ORL]) -> Measure:
        """The measure as it evaluates ``orls``: the same, except for a bare nDCG, whose
        ``grade=auto`` becomes ``native`` or ``lc`` when the ORLs agree on having grades."""
        return self

    def params(self) -> dict[str, Any]:
        """Parameters that differ from their defaults, in declaration order."""
        out = {}
        for f in fields(self):
            if f.name in ("cutoff", self.AT_PARAM):
                continue
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = value
        return out

    def __str__(self) -> str:
        params = self.params()
        body = self.NAME
        if params:
            body += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in params.items()) + ")"
        if self.AT_PARAM is not None:
            return body + f"@{_fmt(getattr(self, self.AT_PARAM))}"
        return body + (f"@{self.cutoff}" if self.cutoff is not None else "")


def _positive_float(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a positive number, got {text!r}")
    return value


def _probability(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise ValueError(f"must lie in (0, 1), got {text!r}")
    return value


def _choice(*allowed: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}, got {text!r}")
        return text

    return convert


def _weights(text: str) -> str:
    if text in WEIGHT_PRESETS:
        return text
    try:
        values = tuple(float(v) for v in text.split(";"))
    except ValueError:
        raise ValueError(
            f"must be a preset ({', '.join(WEIGHT_PRESETS)}) or w1;w2;..., got {text!r}"
        ) from None
    return str(Weights(values))


def _boolean(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"must be true or false, got {text!r}")


def _level(text: str) -> float:
    """A relevance level ``rel=N``: a positive number (trec_eval's ``-l N``)."""
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a number > 0, got {text!r}")
    return value


def _checked_level(level: float) -> float:
    try:
        return check_level(level)
    except ScoringError as exc:
        raise ScoringError(f"rel: {exc}") from None


# --- RDQ -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RDQ(Measure):
    """Rank-Deviation Quality (docs/measures.md, "RDQ") with a penalty, weights, alpha, lam."""

    penalty: str = "m2"
    alpha: float = 1.0
    lam: float = 0.2
    weights: str = "vertical"

    NAME: ClassVar[str] = "RDQ"
    DESCRIPTION: ClassVar[str] = "Rank-Deviation Quality against the tiered ORL (needs @k)"
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {
        "penalty": str,
        "alpha": _positive_float,
        "lam": _positive_float,
        "weights": _weights,
    }
    NEEDS_CUTOFF: ClassVar[bool] = True
    ALIASES: ClassVar[dict[str, dict[str, Any]]] = {
        "RDQm1": {"penalty": "m1"},
        "RDQm2-a1": {"penalty": "m2", "alpha": 1.0},
        "RDQm2-a4": {"penalty": "m2", "alpha": 4.0},
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        penalty = get_penalty(self.penalty)
        if not penalty.uses_alpha_lam and (self.alpha != 1.0 or self.lam != 0.2):
            raise ScoringError(f"alpha and lam apply to penalty m2 only, not {self.penalty!r}")
        if not (self.alpha > 0 and self.lam > 0):
            raise ScoringError(f"alpha and lam must be > 0, got {self.alpha!r}, {self.lam!r}")
        object.__setattr__(self, "weights", str(resolve_weights(self._weight_spec())))

    def _weight_spec(self) -> str | tuple[float, ...]:
        if self.weights in WEIGHT_PRESETS:
            return self.weights
        return tuple(float(v) for v in self.weights.split(";"))

    def __str__(self) -> str:
        for alias, params in self.ALIASES.items():
            if (
                self.weights == "vertical"
                and self.lam == 0.2
                and all(getattr(self, k) == v for k, v in params.items())
                and (self.penalty != "m1" or self.alpha == 1.0)
            ):
                return f"{alias}@{self.cutoff}"
        return super().__str__()

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        assert self.cutoff is not None
        return rdq(
            orl,
            ranking,
            self.cutoff,
            penalty=self.penalty,
            alpha=self.alpha,
            lam=self.lam,
            weights=self._weight_spec(),
        )

    def batch(self, data: BatchData) -> np.ndarray:
        k = self._k(data)
        mu = resolve_weights(self._weight_spec()).array(k)
        g = data.ranks[:, :k]
        hit = g > 0
        rows, cols = np.nonzero(hit)
        factors = np.zeros(g.shape)
        if rows.size:
            factors[rows, cols] = get_penalty(self.penalty)(
                cols + 1,
                data.ideal_ranks[rows, cols],
                g[rows, cols],
                data.n_ref[rows],
                alpha=self.alpha,
                lam=self.lam,
            )
        denominator = np.cumsum(mu)[np.minimum(k, data.n_ref) - 1]
        return (factors @ mu) / denominator


# --- nDCG ------------------------------------------------------------------------------
@dataclass(frozen=True)
class nDCG(Measure):
    """Normalised DCG with ORL-derived (bi, ic, lc) or native grades, linear or exp gain.

    The bare name ``nDCG@k`` (``grade=auto``, ``gain=linear``) is trec_eval's
    ``ndcg_cut.k`` on the same reference: linear gain on the native grades
    where the ORL has them, otherwise on the ``lc`` grades that the qrels
    export of an ORL writes (docs/measures.md, "Baselines"). Any other choice
    is spelled out in full, ``nDCG(grade=bi,gain=exp)@k`` (the paper's).
    """

    grade: baselines.GradeSource = "auto"
    gain: baselines.Gain = "linear"

    NAME: ClassVar[str] = "nDCG"
    DESCRIPTION: ClassVar[str] = (
        "normalised DCG; bare: trec_eval ndcg_cut (linear gain, native grades, else lc); "
        "grade=auto|bi|ic|lc|native, gain=linear|exp"
    )
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {
        "grade": _choice("auto", "bi", "ic", "lc", "native"),
        "gain": _choice("linear", "exp"),
    }

    def params(self) -> dict[str, Any]:
        """Both parameters as soon as one differs from the bare name's (a spelled-out variant)."""
        if self.grade == "auto" and self.gain == "linear":
            return {}
        return {"grade": self.grade, "gain": self.gain}

    def spelled_out(self) -> str:
        return f"{self.NAME}(grade={self.grade},gain={self.gain})" + (
            f"@{self.cutoff}" if self.cutoff is not None else ""
        )

    def resolved(self, orls: Sequence[ORL]) -> nDCG:
        """``grade=auto`` made ``native`` (every ORL graded) or ``lc`` (none is)."""
        if self.grade != "auto" or not orls:
            return self
        graded = {orl.has_grades for orl in orls}
        if len(graded) > 1:
            return self
        return nDCG(cutoff=self.cutoff, grade="native" if graded.pop() else "lc", gain=self.gain)

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        k = self.cutoff if self.cutoff is not None else max(len(ranking), orl.n_items)
        return baselines.ndcg(orl, ranking, k, grade=self.grade, gain=self.gain)

    def depth(self, longest_run: int, largest_orl: int) -> int:
        return self.cutoff if self.cutoff is not None else max(longest_run, largest_orl, 1)

    def batch(self, data: BatchData) -> np.ndarray:
        grade = self.grade
        if grade == "auto":
            graded = np.fromiter(
                (o.has_grades for o in data.orls), dtype=bool, count=len(data.orls)
            )
            if graded.all() and data.grades is not None:
                grade = "native"
            elif not graded.any():
                grade = "lc"
            else:  # a mix of graded and ungraded ORLs: each query by its own grades
                return np.array(
                    [self.compute(o, data.ranking_of(row)) for row, o in enumerate(data.orls)],
                    dtype=np.float64,
                )
        k = self._k(data)
        g = data.ranks[:, :k].astype(np.float64)
        g_star = data.ideal_ranks[:, :k].astype(np.float64)
        ideal_mask = data.positions[None, :k] <= data.n_ref[:, None]
        top = (data.n_tiers + 1)[:, None].astype(np.float64)
        if grade == "bi":
            grades, ideal = (g > 0).astype(np.float64), ideal_mask.astype(np.float64)
        elif grade == "ic":
            grades = np.divide(1.0, g, out=np.zeros_like(g), where=g > 0)
            ideal = np.where(ideal_mask, 1.0 / g_star, 0.0)
        elif grade == "lc":
            grades = np.where(g > 0, top - g, 0.0)
            ideal = np.where(ideal_mask, top - g_star, 0.0)
        else:
            if data.grades is None or data.ideal_native is None:
                raise ScoringError(
                    "nDCG(grade=native) needs ORLs built from graded labels for every query"
                )
            grades, ideal = data.grades[:, :k], data.ideal_native[:, :k]
        if self.gain == "exp":
            grades, ideal = np.exp2(grades) - 1.0, np.exp2(ideal) - 1.0
        discount = 1.0 / np.log2(data.positions[:k] + 1.0)
        idcg = ideal @ discount
        return np.divide(grades @ discount, idcg, out=np.zeros(len(idcg)), where=idcg > 0)


# --- binary baselines ------------------------------------------------------------------
def _relevance(data: BatchData, k: int) -> np.ndarray:
    return (data.ranks[:, :k] > 0).astype(np.float64)


@dataclass(frozen=True)
class RBP(Measure):
    """Rank-biased precision; ``residual=true`` reports the residual ``p^k`` instead."""

    p: float = 0.8
    residual: bool = False

    NAME: ClassVar[str] = "RBP"
    DESCRIPTION: ClassVar[str] = "rank-biased precision, persistence p (residual=true: p^k)"
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {"p": _probability, "residual": _boolean}

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.p < 1:
            raise ScoringError(f"RBP persistence p must lie in (0, 1), got {self.p!r}")

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        if self.residual:
            return baselines.rbp_residual(self.cutoff or len(ranking), p=self.p)
        return baselines.rank_biased_precision(orl, ranking, self.cutoff, p=self.p)

    def batch(self, data: BatchData) -> np.ndarray:
        k = self._k(data)
        if self.residual:
            if self.cutoff is None:
                return np.power(self.p, data.filled.sum(axis=1).astype(np.float64))
            return np.full(len(data.queries), self.p**k)
        decay = (1.0 - self.p) * np.power(self.p, np.arange(k))
        return _relevance(data, k) @ decay


@dataclass(frozen=True)
class CMP(Measure):
    """Compatibility-style overlap with the tier-respecting ideal (docs/measures.md,
    "Baselines")."""

    p: float = 0.95

    NAME: ClassVar[str] = "CMP"
    DESCRIPTION: ClassVar[str] = "overlap with the ideal ordering, persistence p (needs @k)"
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {"p": _probability}
    NEEDS_CUTOFF: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.p < 1:
            raise ScoringError(f"CMP persistence p must lie in (0, 1), got {self.p!r}")

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        return baselines.compatibility(orl, ranking, self.cutoff, p=self.p)

    def batch(self, data: BatchData) -> np.ndarray:
        k = self._k(data)
        n_q = len(data.queries)
        entry = np.minimum(data.cmp_entry[:, :k], k + 1) - 1
        flat = (np.arange(n_q)[:, None] * (k + 1) + entry).ravel()
        counts = np.bincount(flat, minlength=n_q * (k + 1)).reshape(n_q, k + 1)[:, :k]
        overlap = np.cumsum(counts, axis=1)
        depth = data.positions[:k]
        decay = np.power(self.p, depth - 1.0)
        best = np.minimum(depth[None, :], data.n_ref[:, None]) / depth[None, :]
        return ((overlap / depth[None, :]) @ decay) / (best @ decay)


# --- rank correlations -----------------------------------------------------------------
@dataclass(frozen=True)
class _Correlation(Measure):
    """Shared batch path of the rank correlations: only defined rows are computed."""

    RANGE: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    METHOD: ClassVar[baselines.CorrelationMethod] = "kendall"

    def correlation(self, orl: ORL, ranking: list[str]) -> baselines.RankCorrelation:
        """Value and, when undefined, the reason."""
        return baselines.rank_correlation(orl, ranking, self.cutoff, method=self.METHOD)

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        return self.correlation(orl, ranking).value

    def batch(self, data: BatchData) -> np.ndarray:
        k = self._k(data)
        credited = (data.ranks[:, :k] > 0).sum(axis=1)
        only_orl = ~(data.filled[:, :k] & ~data.in_orl[:, :k]).any(axis=1)
        defined = (credited == data.n_ref) & only_orl & (data.n_tiers > 1)
        out = np.full(len(data.queries), np.nan)
        for row in np.flatnonzero(defined).tolist():
            out[row] = self.compute(data.orls[row], data.ranking_of(row))
        return out


@dataclass(frozen=True)
class KendallTau(_Correlation):
    """Kendall's tau-b between candidate positions and ORL ranks (NaN when undefined)."""

    NAME: ClassVar[str] = "KendallTau"
    DESCRIPTION: ClassVar[str] = "Kendall tau-b vs the ORL; NaN unless same item set, >1 tier"


@dataclass(frozen=True)
class SpearmanRho(_Correlation):
    """Spearman's rho between candidate positions and ORL ranks (NaN when undefined)."""

    NAME: ClassVar[str] = "SpearmanRho"
    DESCRIPTION: ClassVar[str] = "Spearman rho vs the ORL; NaN unless same item set, >1 tier"
    METHOD: ClassVar[baselines.CorrelationMethod] = "spearman"


# --- trec_eval, gdeval and ir_measures measures ---------------------------------------
# (docs/measures.md, "trec_eval, gdeval and ir_measures measures")
def _nonnegative_unit(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"must lie in [0, 1], got {text!r}")
    return value


def _relevant(data: BatchData) -> np.ndarray:
    """First occurrences of ORL items at every laid-out position."""
    return data.ranks > 0


@dataclass(frozen=True)
class IPrec(Measure):
    """Interpolated precision at a recall level, ``IPrec@0.5`` (trec_eval ``iprec_at_recall``);
    ``rel=N`` as the other binary measures (:class:`_Binary`)."""

    recall: float = 0.0
    rel: float | None = None

    NAME: ClassVar[str] = "IPrec"
    DESCRIPTION: ClassVar[str] = "interpolated precision at recall r in [0,1] (trec_eval)"
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {
        "recall": _nonnegative_unit,
        "rel": _level,
    }
    TAKES_CUTOFF: ClassVar[bool] = False
    AT_PARAM: ClassVar[str | None] = "recall"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.recall <= 1.0:
            raise ScoringError(f"IPrec's recall level must lie in [0, 1], got {self.recall!r}")
        if self.rel is not None:
            object.__setattr__(self, "rel", _checked_level(self.rel))

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        if self.rel is not None:
            leveled = orl_at_level(orl, self.rel)
            if leveled is None:
                return 0.0
            orl = leveled
        return trec_measures.interpolated_precision(orl, ranking, self.recall)

    def batch(self, data: BatchData) -> np.ndarray:
        has = None
        if self.rel is not None:
            data, has = data.at_level(self.rel)
        found = np.cumsum(_relevant(data), axis=1)
        needed = trec_measures.iprec_cutoff(self.recall, data.n_ref)
        reach = data.filled & (found >= np.asarray(needed)[:, None])
        out = np.where(reach, found / data.positions[None, :], 0.0).max(axis=1, initial=0.0)
        return out if has is None else np.where(has, out, 0.0)


@dataclass(frozen=True)
class ERR(Measure):
    """Expected reciprocal rank, gdeval's definition (grades up to 4)."""

    grade: trec_measures.ErrGrade = "auto"

    NAME: ClassVar[str] = "ERR"
    DESCRIPTION: ClassVar[str] = "expected reciprocal rank (gdeval); grade=auto|native|tiers"
    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {
        "grade": _choice("auto", "native", "tiers")
    }

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        return trec_measures.expected_reciprocal_rank(orl, ranking, self.cutoff, grade=self.grade)

    def batch(self, data: BatchData) -> np.ndarray:
        k = self._k(data)
        g = data.ranks[:, :k]
        hit = g > 0
        native = data.grades
        has_native = np.fromiter((o.grades is not None for o in data.orls), bool, len(data.orls))
        if self.grade == "native" or (self.grade == "auto" and has_native.all()):
            for orl in data.orls:  # the checks (native grades present, at most 4)
                trec_measures.err_grades(orl, "native")
            assert native is not None
            grades = np.where(hit, native[:, :k], 0.0)
        elif self.grade == "tiers" or not has_native.any():
            top = trec_measures.ERR_MAX_GRADE + 1
            grades = np.where(hit, np.maximum(top - g, 1), 0).astype(np.float64)
        else:  # a mix of graded and ungraded ORLs: each query by its own source
            return np.array(
                [self.compute(o, data.ranking_of(row)) for row, o in enumerate(data.orls)]
            )
        stop = (np.exp2(grades) - 1.0) / 2.0**trec_measures.ERR_MAX_GRADE
        keep_going = np.cumprod(1.0 - stop, axis=1)
        before = np.hstack([np.ones((len(stop), 1)), keep_going[:, :-1]])
        return (stop * before / data.positions[None, :k]).sum(axis=1)


# --- measures without parameters: a per-query function and a batch kernel each ----------
def _average_precision(data: BatchData, k: int) -> np.ndarray:
    rel = _relevance(data, k)
    precision_at = np.cumsum(rel, axis=1) / data.positions[None, : rel.shape[1]]
    return (precision_at * rel).sum(axis=1) / data.n_ref


def _reciprocal_rank(data: BatchData, k: int) -> np.ndarray:
    rel = _relevance(data, k) > 0
    first = rel.argmax(axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)


def _precision(data: BatchData, k: int) -> np.ndarray:
    return _relevance(data, k).sum(axis=1) / k


def _recall(data: BatchData, k: int) -> np.ndarray:
    return _relevance(data, k).sum(axis=1) / data.n_ref


def _r_precision(data: BatchData, k: int) -> np.ndarray:
    within = data.positions[None, :] <= data.n_ref[:, None]
    return (_relevant(data) & within).sum(axis=1) / data.n_ref


def _success(data: BatchData, k: int) -> np.ndarray:
    return np.minimum(_relevance(data, k).sum(axis=1), 1.0)


def _bpref(data: BatchData, k: int) -> np.ndarray:
    rel = _relevant(data)
    above = np.cumsum(data.nonrelevant, axis=1)
    cap = np.minimum(data.n_nonrelevant, data.n_ref)[:, None].astype(np.float64)
    lost = np.divide(
        np.minimum(above, data.n_ref[:, None]), cap, out=np.zeros(above.shape), where=cap > 0
    )
    return np.where(rel, 1.0 - lost, 0.0).sum(axis=1) / data.n_ref


def _inferred_ap(data: BatchData, k: int) -> np.ndarray:
    rel = _relevant(data)
    rel_above = np.cumsum(rel, axis=1) - rel
    judged_above = rel_above + np.cumsum(data.nonrelevant, axis=1)
    j = data.positions[None, :] - 1.0
    eps = trec_measures.INFAP_EPSILON
    expected = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (judged_above / np.maximum(j, 1.0)) * (
        (rel_above + eps) / (judged_above + 2 * eps)
    )
    expected[:, 0] = 1.0
    return np.where(rel, expected, 0.0).sum(axis=1) / data.n_ref


def _num_ret(data: BatchData, k: int) -> np.ndarray:
    import pandas as pd  # here only: scoring most measures loads no pandas

    run = data.rankings
    codes, uniques = pd.factorize(run.items)
    rows = np.repeat(np.arange(len(data.queries)), np.diff(run.offsets))
    distinct = np.unique(rows * max(len(uniques), 1) + codes) // max(len(uniques), 1)
    return np.bincount(distinct, minlength=len(data.queries)).astype(np.float64)


def _num_rel(data: BatchData, k: int) -> np.ndarray:
    return data.n_ref.astype(np.float64)


def _num_rel_ret(data: BatchData, k: int) -> np.ndarray:
    return _relevant(data).sum(axis=1).astype(np.float64)


def _judged(data: BatchData, k: int) -> np.ndarray:
    shown = np.minimum(k, data.lengths)
    judged = data.judged[:, :k].sum(axis=1)
    return np.divide(judged, shown, out=np.zeros(len(shown)), where=shown > 0)


#: How a measure reads ``@k``: ``optional`` (a cutoff, or the whole candidate), ``needed`` or
#: ``none`` (it reads the whole candidate); ``count``: as ``none``, and its values are counts.
CutoffRule = Literal["optional", "needed", "none", "count"]
PerQuery = Callable[[ORL, list[str], int | None], float]
Kernel = Callable[[BatchData, int], np.ndarray]


@dataclass(frozen=True)
class _Plain(Measure):
    """A measure without parameters of its own, made by :func:`_plain`: its per-query function
    takes ``(orl, ranking, cutoff)``, its batch kernel ``(data, k)``."""

    PER_QUERY: ClassVar[PerQuery]
    KERNEL: ClassVar[Kernel]

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        return type(self).PER_QUERY(orl, ranking, self.cutoff)

    def batch(self, data: BatchData) -> np.ndarray:
        return type(self).KERNEL(data, self._k(data))


@dataclass(frozen=True)
class _Binary(_Plain):
    """A binary measure of :func:`_plain`: ``rel=N`` counts as relevant only the items
    graded at least ``N`` (trec_eval's ``-l N``; docs/measures.md, "Relevance level")."""

    rel: float | None = None

    PARAMS: ClassVar[dict[str, Callable[[str], Any]]] = {"rel": _level}

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rel is not None:
            object.__setattr__(self, "rel", _checked_level(self.rel))

    def compute(self, orl: ORL, ranking: list[str]) -> float:
        if self.rel is None:
            return super().compute(orl, ranking)
        leveled = orl_at_level(orl, self.rel)
        return 0.0 if leveled is None else type(self).PER_QUERY(leveled, ranking, self.cutoff)

    def batch(self, data: BatchData) -> np.ndarray:
        if self.rel is None:
            return super().batch(data)
        leveled, has = data.at_level(self.rel)
        return np.where(has, type(self).KERNEL(leveled, self._k(leveled)), 0.0)


def _plain(
    name: str,
    doc: str,
    description: str,
    per_query: PerQuery,
    kernel: Kernel,
    cutoff: CutoffRule = "optional",
    *,
    binary: bool = False,
) -> type[Measure]:
    """A measure without parameters (docs/measures.md, "Baselines"): ``doc`` is its docstring,
    ``description`` its line in ``orlbuild measures``; a ``binary`` one takes ``rel=N``."""
    namespace = {
        "__doc__": doc,
        "__module__": __name__,
        "__qualname__": name,
        "NAME": name,
        "DESCRIPTION": description,
        "NEEDS_CUTOFF": cutoff == "needed",
        "TAKES_CUTOFF": cutoff in ("optional", "needed"),
        "RANGE": (0.0, math.inf) if cutoff == "count" else (0.0, 1.0),
        "AGGREGATE": "sum" if cutoff == "count" else "mean",
        "PER_QUERY": staticmethod(per_query),
        "KERNEL": staticmethod(kernel),
    }
    base = _Binary if binary else _Plain
    return dataclass(frozen=True)(type(name, (base,), namespace))


def _whole(function: Callable[[ORL, Sequence[str]], float]) -> PerQuery:
    """A per-query function of a measure that reads the whole candidate (no cutoff)."""
    return lambda orl, ranking, cutoff: function(orl, ranking)


AP = _plain(
    "AP",
    "Average precision with trec_eval's denominator ``|R|``.",
    "average precision (divided by |R|, as trec_eval's map_cut)",
    baselines.average_precision,
    _average_precision,
    binary=True,
)
RR = _plain(
    "RR",
    "Reciprocal rank of the first ORL item.",
    "reciprocal rank of the first reference item",
    baselines.reciprocal_rank,
    _reciprocal_rank,
    binary=True,
)
P = _plain(
    "P",
    "Precision at k (ORL items are the relevant ones).",
    "precision at k (needs @k)",
    baselines.precision,
    _precision,
    "needed",
    binary=True,
)
R = _plain(
    "R",
    "Recall at k: relevant items in the top k over ``|R|`` (trec_eval ``recall_k``).",
    "recall: reference items in the top k / |R| (trec_eval recall_k)",
    trec_measures.recall,
    _recall,
    binary=True,
)
Rprec = _plain(
    "Rprec",
    "R-precision: relevant items in the top ``|R|`` over ``|R|`` (trec_eval ``Rprec``).",
    "precision at depth |R| (trec_eval Rprec)",
    _whole(trec_measures.r_precision),
    _r_precision,
    "none",
    binary=True,
)
Success = _plain(
    "Success",
    "1 when a relevant item is in the top k, else 0 (trec_eval ``success_k``).",
    "1 if a reference item is in the top k (trec_eval success_k)",
    trec_measures.success,
    _success,
    binary=True,
)
Bpref = _plain(
    "Bpref",
    "Binary preference over judged items (trec_eval ``bpref``).",
    "binary preference; judged non-relevant = grade 0 (trec_eval)",
    _whole(trec_measures.bpref),
    _bpref,
    "none",
    binary=True,
)
infAP = _plain(
    "infAP",
    "Inferred average precision (trec_eval ``infAP``).",
    "inferred AP; judged non-relevant = grade 0 (trec_eval infAP)",
    _whole(trec_measures.inferred_ap),
    _inferred_ap,
    "none",
    binary=True,
)
NumRet = _plain(
    "NumRet",
    "Distinct items retrieved (trec_eval ``num_ret``).",
    "distinct items retrieved (trec_eval num_ret; a count)",
    lambda _orl, ranking, _cutoff: trec_measures.num_ret(ranking),
    _num_ret,
    "count",
)
NumRel = _plain(
    "NumRel",
    "``|R|``, the query's reference items (trec_eval ``num_rel``).",
    "reference items |R| (trec_eval num_rel; a count)",
    lambda orl, *_: trec_measures.num_rel(orl),
    _num_rel,
    "count",
    binary=True,
)
NumRelRet = _plain(
    "NumRelRet",
    "Relevant items retrieved (trec_eval ``num_rel_ret``).",
    "reference items retrieved (trec_eval num_rel_ret; a count)",
    _whole(trec_measures.num_rel_ret),
    _num_rel_ret,
    "count",
    binary=True,
)
Hits = _plain(
    "Hits",
    "Relevant items in the top k (ranx ``hits@k``): ``NumRelRet`` cut at k, averaged.",
    "reference items in the top k (ranx hits; a count, averaged over queries)",
    lambda orl, ranking, cutoff: trec_measures.num_rel_ret(orl, ranking[:cutoff]),
    lambda data, k: _relevance(data, k).sum(axis=1),
    "needed",
    binary=True,
)
Hits.RANGE = (0.0, math.inf)  # a count; its all value is the mean, as ranx prints it
Judged = _plain(
    "Judged",
    "Share of the top k that is judged (ir_measures ``Judged@k``).",
    "share of the top min(k, len) that is judged (ir_measures)",
    trec_measures.judged_share,
    _judged,
)


#: Registry: measure name -> definition class.
MEASURES: dict[str, type[Measure]] = {
    cls.NAME: cls
    for cls in (
        RDQ,
        nDCG,
        AP,
        RBP,
        CMP,
        RR,
        P,
        KendallTau,
        SpearmanRho,
        R,
        Rprec,
        Success,
        Bpref,
        infAP,
        IPrec,
        NumRet,
        NumRel,
        NumRelRet,
        ERR,
        Judged,
        Hits,
    )
}

#: Other libraries' spellings of the same computations, by lower-cased name
#: (docs/measures.md, "Aliases"): ranx's names (``ndcg@10``, ``map@100``, ``mrr``,
#: ``precision@10``, ``recall@100``, ``hits@10``, ``hit_rate@10``, ``r-precision``).
#: ir_measures' names (``nDCG@10``, ``AP``, ``RR``, ``P@10``, ``R@100``, ``Judged@10``)
#: are orlbuild's own; any registered name is also accepted in any case (``ndcg``,
#: ``ap``, ``p@5``).
ALIASES: dict[str, tuple[str, str]] = {
    "ndcg": ("nDCG", "ranx"),
    "map": ("AP", "ranx"),
    "mrr": ("RR", "ranx"),
    "precision": ("P", "ranx"),
    "recall": ("R", "ranx"),
    "hits": ("Hits", "ranx"),
    "hit_rate": ("Success", "ranx"),
    "r-precision": ("Rprec", "ranx"),
}


def _resolve_alias(base: str) -> str | None:
    """The registered name ``base`` stands for: itself, an alias, or a name in other case."""
    if base in MEASURES or base in RDQ.ALIASES:
        return base
    lowered = base.lower()
    if lowered in ALIASES:
        return ALIASES[lowered][0]
    same = [n for n in (*RDQ.ALIASES, *MEASURES) if n.lower() == lowered]
    return same[0] if len(same) == 1 else None


def _suggestion(base: str) -> str | None:
    """The closest real name to an unknown ``base``: one it begins (``RDQm2`` ->
    ``RDQm2-a1``), else the closest spelling, case ignored."""
    names = [*RDQ.ALIASES, *MEASURES]
    lowered = base.lower()
    extended = [n for n in names if n.lower().startswith(lowered)]
    if extended:
        return min(extended, key=len)
    by_lower = {n.lower(): n for n in names} | {a: t for a, (t, _) in ALIASES.items()}
    close = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=0.5)
    return by_lower[close[0]] if close else None


_NAME_RE = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<cutoff>[^@]*))?$"
)


def valid_names() -> str:
    """Human-readable list of valid measure names (used in error messages)."""
    names = [*RDQ.ALIASES, *MEASURES]
    return (
        ", ".join(names)
        + " - with optional (param=value,...) and @k; e.g. RDQm2-a1@10, nDCG(grade=lc)@10, "
        "RBP(p=0.8)@10; other libraries' spellings, any case: "
        + ", ".join(ALIASES)
        + "; penalties: "
        + ", ".join(PENALTIES)
        + "; weight presets: "
        + ", ".join(WEIGHT_PRESETS)
    )


_RANX_LEVEL = re.compile(r"^(?P<body>.+)-l(?P<level>\d+)$")


def _with_level(measure: Measure, level: float) -> Measure:
    """``measure`` at relevance level ``level`` (measures whose ``PARAMS`` name ``rel``)."""
    # ``rel`` is a field of the graded subclasses only, which the base type does not declare.
    leveled: Measure = replace(cast(Any, measure), rel=level)
    return leveled


def _parse_one(name: str) -> Measure:
    """Parse one measure name or raise ``ValueError`` with the reason."""
    leveled = _RANX_LEVEL.match(name.strip())
    if leveled is not None and "(" not in leveled["body"]:  # ranx's map@100-l2: AP(rel=2)@100
        measure = _parse_one(leveled["body"])
        if "rel" not in measure.PARAMS:
            raise ValueError(f"{measure.NAME} takes no relevance level (-l{leveled['level']})")
        return _with_level(measure, _level(leveled["level"]))
    match = _NAME_RE.match(name.strip())
    if not match:
        raise ValueError("not of the form NAME(param=value,...)@k")
    typed, raw_params, raw_cutoff = match["name"], match["params"], match["cutoff"]
    preset: dict[str, Any] = {}
    cls: type[Measure]
    base = _resolve_alias(typed)
    if base is None:
        close = _suggestion(typed)
        rest = name.strip()[len(typed) :]
        raise ValueError("unknown measure" + (f" (did you mean {close}{rest}?)" if close else ""))
    if base in RDQ.ALIASES:
        preset, cls = dict(RDQ.ALIASES[base]), RDQ
    else:
        cls = MEASURES[base]
    kwargs: dict[str, Any] = dict(preset)
    for part in filter(None, (raw_params or "").split(",")):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise ValueError(f"parameter {part!r} is not key=value")
        if key not in cls.PARAMS:
            allowed = ", ".join(cls.PARAMS) or "none"
            raise ValueError(f"{cls.NAME} has no parameter {key!r} (allowed: {allowed})")
        if key in preset:
            raise ValueError(f"{base} fixes {key}; use RDQ(...) to set it")
        try:
            kwargs[key] = cls.PARAMS[key](value)
        except ValueError as exc:
            raise ValueError(f"parameter {key}: {exc}") from None
    if raw_cutoff is None and cls.AT_PARAM is not None and cls.AT_PARAM not in kwargs:
        raise ValueError(f"{cls.NAME} needs @{cls.AT_PARAM}, e.g. {cls.NAME}@0.5")
    if raw_cutoff is not None and cls.AT_PARAM is not None:
        try:
            kwargs[cls.AT_PARAM] = cls.PARAMS[cls.AT_PARAM](raw_cutoff)
        except ValueError as exc:
            raise ValueError(f"{cls.AT_PARAM} after @: {exc}") from None
    elif raw_cutoff is not None:
        if not raw_cutoff.isdigit() or int(raw_cutoff) < 1:
            raise ValueError(f"cutoff must be an integer >= 1, got {raw_cutoff!r}")
        kwargs["cutoff"] = int(raw_cutoff)
    try:
        return cls(**kwargs)
    except ScoringError as exc:
        raise ValueError(str(exc)) from None


#: Measures parsed from their names, by name (:func:`_parsed`); bounded, never evicted.
_PARSED: dict[str, Measure] = {}
_PARSED_LIMIT = 4096


def _parsed(name: str) -> Measure:
    """:func:`_parse_one` of ``name``, parsed once per name and handed out as a fresh copy.

    Scoring and the property tests parse the same few names tens of thousands
    of times. A name's measure depends only on the name, except through a
    user penalty (:func:`scoring.register_penalty` can add it and a caller can
    remove it), so a measure naming one is never cached; nor is a failure.
    Each call returns its own shallow copy (the fields are numbers and
    strings), so no caller can change what the next one receives.
    """
    cached = _PARSED.get(name)
    if cached is None:
        cached = _parse_one(name)
        user_penalty = isinstance(cached, RDQ) and cached.penalty not in BUILT_IN_PENALTIES
        if user_penalty or len(_PARSED) >= _PARSED_LIMIT:
            return cached
        _PARSED[name] = cached
    fresh = object.__new__(type(cached))
    fresh.__dict__.update(cached.__dict__)
    return fresh


def parse_measures(names: Iterable[str | Measure]) -> list[Measure]:
    """Parse several measure names, reporting every bad one at once.

    Raises
    ------
    UnknownMeasureError
        Listing each bad name with its reason, and the valid names.
    """
    parsed: list[Measure] = []
    problems: list[str] = []
    for name in names:
        if isinstance(name, Measure):
            parsed.append(name)
            continue
        try:
            parsed.append(_parsed(name) if isinstance(name, str) else _parse_one(name))
        except ValueError as exc:
            problems.append(f"bad measure {name!r}: {exc}")
    if problems:
        raise UnknownMeasureError(problems, valid_names())
    return parsed


def with_rel_level(names: Iterable[str], level: float) -> list[str]:
    """trec_eval's ``-l N``: ``rel=N`` on every binary measure of ``names`` that sets no
    level of its own (docs/measures.md, "Relevance level").

    Returns
    -------
    list of str
        The names, those of binary measures rewritten canonically with ``rel=N``
        (``AP@10`` -> ``AP(rel=2)@10``), the others as given.

    Raises
    ------
    UnknownMeasureError
        For a bad name (all bad names at once).
    ScoringError
        For a level that is not a number > 0.

    Examples
    --------
    >>> with_rel_level(["AP", "RR@10", "nDCG@10", "P(rel=3)@5"], 2)
    ['AP(rel=2)', 'RR(rel=2)@10', 'nDCG@10', 'P(rel=3)@5']
    """
    level = _checked_level(level)
    names = list(names)
    out = []
    for name, measure in zip(names, parse_measures(names), strict=True):
        if "rel" in measure.PARAMS and getattr(measure, "rel", None) is None:
            out.append(str(_with_level(measure, level)))
        else:
            out.append(name)
    return out


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name such as ``RDQm2-a1@10`` or ``nDCG(grade=lc,gain=linear)@5``.

    The result is callable on one query, ``measure(orl, ranking) -> float``,
    and ``str(measure)`` is its canonical name.

    Raises
    ------
    UnknownMeasureError
        With the reason and the list of valid names.
    """
    return parse_measures([name])[0]
