"""RDQ, CMP and rank correlations for ir_measures (docs/integrations.md, "RDQ in ir_measures and
PyTerrier").

Importing this module defines, through ir_measures' public extension point
(:func:`ir_measures.define`), the measures ir_measures lacks:

=================  ==========================================  ===========
name               scoring measure                              cutoff
=================  ==========================================  ===========
``RDQ_m1``         ``RDQm1@k``                                  required
``RDQ_m2_a1``      ``RDQm2-a1@k``                               required
``RDQ_m2_a4``      ``RDQm2-a4@k``                               required
``CMP``            ``CMP@k``                                    required
``KendallTau``     ``KendallTau[@k]``                           optional
``SpearmanRho``    ``SpearmanRho[@k]``                          optional
=================  ==========================================  ===========

so that ``ir_measures.calc_aggregate([RDQ_m2_a1 @ 10], qrels, run)`` works,
and anything built on ir_measures (``pyterrier.Experiment``) accepts them; and
registers their names, so that they can be given as strings as ir_measures' own
are: ``ir_measures.parse_measure("RDQ_m2_a1@10")``,
``ir_measures.calc_aggregate(["RDQ_m1@10", "nDCG@10"], qrels, run)``,
``pyterrier.Experiment(..., eval_metrics=["RDQ_m2_a1@10"])``.
``python -m scoring.integrations.ir_measures QRELS RUN RDQ_m2_a1@10`` is
ir_measures' command line with them known.

Conventions, so that a value equals :func:`scoring.evaluate_run` on the same data:

* the qrels are read as ORLs by the graded route (each distinct positive grade
  a tier, highest first; grade 0 and negative grades mean judged not
  relevant); a query without a positive grade has no ORL, and ir_measures
  counts it as 0, as it does for its own measures;
* the run is ordered as trec_eval <= 9.0.8 orders it (score descending as
  float32, ties by document id descending) on the *whole* run - the cutoff
  is the measure's ``k``, not a truncation of the run by ir_measures - and
  queries of the qrels missing from the run score 0;
* an undefined Kendall tau / Spearman rho is NaN for that query and left out
  of the mean, as in :func:`scoring.evaluate_run`.

``define`` hands its function only the qrels and the run, not the measure's
cutoff; each measure's evaluation therefore replaces the ``runtime_impl``
that ``define`` generates with one that reads the cutoff from the measure's
parameters and calls :func:`scoring.evaluate_run` once for all queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import ir_measures
import numpy as np
import pandas as pd

from scoring.errors import ScoringError
from scoring.evaluation import evaluate_run
from scoring.orl import ORL, orls_from_grade_table

__all__ = [
    "CMP",
    "MEASURES",
    "KendallTau",
    "RDQ_m1",
    "RDQ_m2_a1",
    "RDQ_m2_a4",
    "SpearmanRho",
    "main",
    "qrels_as_orls",
]


def qrels_as_orls(qrels: pd.DataFrame) -> dict[str, ORL]:
    """ORLs of ir_measures qrels (``query_id, doc_id, relevance``) by the graded route.

    Grade 0 documents are kept as judged not relevant; negative grades are dropped.

    Raises
    ------
    ScoringError
        When a (query, document) pair is graded twice.
    """
    frame = ir_measures.util.QrelsConverter(qrels, strict=False).as_pd_dataframe()
    if frame.duplicated(["query_id", "doc_id"]).any():
        row = frame[frame.duplicated(["query_id", "doc_id"])].iloc[0]
        raise ScoringError(
            f"qrels grade document {row['doc_id']!r} of query {row['query_id']!r} twice"
        )
    # A negative grade (TREC's "pooled but not judged") is no judgment: neither
    # relevant nor judged not relevant.
    frame = frame[frame["relevance"].to_numpy(dtype=float) >= 0]
    orls, _ = orls_from_grade_table(
        frame["query_id"].astype(str).to_numpy(dtype=object),
        frame["doc_id"].astype(str).to_numpy(dtype=object),
        frame["relevance"].to_numpy(dtype=float),
    )
    return orls


def _run_frame(run: pd.DataFrame) -> pd.DataFrame:
    """ir_measures' run columns as :func:`scoring.evaluate_run` names them."""
    return pd.DataFrame(
        {
            "query": run["query_id"].astype(str).to_numpy(dtype=object),
            "item": run["doc_id"].astype(str).to_numpy(dtype=object),
            "score": run["score"].to_numpy(dtype=float),
        }
    )


def _never(qrels: pd.DataFrame, run: pd.DataFrame) -> Iterable[tuple[str, float]]:
    """Placeholder ``impl`` for :func:`ir_measures.define` (replaced, see the module doc)."""
    raise NotImplementedError  # pragma: no cover


class _NanMean:
    """ir_measures aggregator: the mean of the defined (non-NaN) values."""

    def __init__(self) -> None:
        self.total, self.count = 0.0, 0

    def add(self, value: float) -> None:
        if not np.isnan(value):
            self.total += value
            self.count += 1

    def result(self) -> float:
        return self.total / self.count if self.count else float("nan")


def _define(
    name: str, scoring_name: str, needs_cutoff: bool, description: str, *, may_be_nan: bool = False
) -> Any:
    """ir_measures measure ``name``: ``scoring_name`` by :func:`scoring.evaluate_run`."""
    measure = ir_measures.define(
        _never, name=name, support_cutoff=True, pretty_name=name, short_desc=description
    )
    if may_be_nan:  # undefined values are NaN and left out of the mean
        type(measure).DEFAULT = float("nan")
        type(measure).aggregator = lambda self: _NanMean()

    def runtime_impl(self: Any, qrels: pd.DataFrame, run: pd.DataFrame) -> Iterator[Any]:
        cutoff = self.params.get("cutoff")
        if cutoff is None and needs_cutoff:
            raise ScoringError(f"{name} needs a cutoff, e.g. {name} @ 10")
        label = scoring_name if cutoff is None else f"{scoring_name}@{int(cutoff)}"
        orls = qrels_as_orls(qrels)
        if not orls or run.empty:
            return
        values = evaluate_run(orls, _run_frame(run), [label]).per_query[label]
        for query, value in values.items():
            yield ir_measures.Metric(str(query), self, float(value))

    type(measure).runtime_impl = runtime_impl
    return measure


RDQ_m1 = _define("RDQ_m1", "RDQm1", True, "RDQ, penalty m1, against the graded-route ORL")
RDQ_m2_a1 = _define("RDQ_m2_a1", "RDQm2-a1", True, "RDQ, penalty m2, alpha 1")
RDQ_m2_a4 = _define("RDQ_m2_a4", "RDQm2-a4", True, "RDQ, penalty m2, alpha 4")
CMP = _define("CMP", "CMP", True, "overlap with the ideal ordering of the ORL")
KendallTau = _define(
    "KendallTau", "KendallTau", False, "Kendall tau-b against the ORL", may_be_nan=True
)
SpearmanRho = _define(
    "SpearmanRho", "SpearmanRho", False, "Spearman rho against the ORL", may_be_nan=True
)

#: Name -> measure, as defined above.
MEASURES = {m.NAME: m for m in (RDQ_m1, RDQ_m2_a1, RDQ_m2_a4, CMP, KendallTau, SpearmanRho)}


def _register_names() -> None:
    """Make the measures nameable as strings: ``ir_measures.parse_measure("RDQ_m2_a1@10")``
    looks the name up in ``ir_measures.measures.registry`` (as does every function that
    takes measure strings, ``calc_aggregate`` included). ``CMP`` and the correlations are
    registered too, unless ir_measures already has a measure of that name."""
    registry = ir_measures.measures.registry
    for name, measure in MEASURES.items():
        if registry.get(name) is None or getattr(registry[name], "NAME", None) == name:
            registry[name] = measure  # re-importing this module replaces its own entries


def _accepting_names(function: Any) -> Any:
    """``function(measures, ...)`` that also takes measure names, parsed by
    ``ir_measures.parse_measure`` (ir_measures 0.4's top-level functions take only
    measure objects; a name raised ``AttributeError``)."""
    if getattr(function, "_takes_names", False):
        return function

    def wrapped(measures: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
        parsed = [ir_measures.parse_measure(m) if isinstance(m, str) else m for m in measures]
        return function(parsed, *args, **kwargs)

    wrapped._takes_names = True  # type: ignore[attr-defined]
    wrapped.__wrapped__ = function  # type: ignore[attr-defined]
    wrapped.__doc__ = function.__doc__
    return wrapped


_register_names()
for _name in ("calc_aggregate", "iter_calc", "evaluator"):
    setattr(ir_measures, _name, _accepting_names(getattr(ir_measures, _name)))


def main() -> None:
    """ir_measures' command line with these measures known:
    ``python -m scoring.integrations.ir_measures qrels run RDQ_m2_a1@10 nDCG@10``.

    ir_measures' own ``ir_measures`` command reads only its built-in registry (it has
    no plugin entry point; docs/integrations.md, "RDQ in ir_measures and PyTerrier").
    """
    from ir_measures.__main__ import main_cli

    main_cli()


if __name__ == "__main__":
    main()
