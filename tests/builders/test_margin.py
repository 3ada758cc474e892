"""``--margin`` on builds: tested decisions record separated, equivalent or undecided
(orlbuild.builders.tiering.equivalence.with_pair_states; docs/planning.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from orlbuild.builders import BuildParameters, build_orls
from orlbuild.builders.parameters import resolve_parameters
from orlbuild.builders.tiering.equivalence import state_changes
from orlbuild.errors import ConfigError
from orlbuild.report.sections import _orl_block
from tests.builders.simulation import simulate_round_robin


@pytest.fixture(scope="module")
def judgments() -> pd.DataFrame:
    """``eq``: two equal items compared 4000 times (interval about +-0.1); ``far``: two items
    4 apart compared 200 times; ``few``: two equal items compared 6 times."""
    rng = np.random.default_rng(0)
    return pd.concat(
        [
            simulate_round_robin(rng, np.zeros(2), 4000, query="eq"),
            simulate_round_robin(rng, np.array([2.0, -2.0]), 200, query="far"),
            simulate_round_robin(rng, np.zeros(2), 6, query="few"),
        ],
        ignore_index=True,
    )


def _states(frame: pd.DataFrame, margin: float | None) -> dict[str, list[str | None]]:
    # the states come from the max-t test, which a posterior build runs only with --margin
    params = BuildParameters(source="pairwise", margin=margin, tiering="simultaneous")
    params, outcome = build_orls(frame, params)
    assert params.margin == margin and params.to_json()["margin"] == margin
    return {q: [d.state for d in o.decisions] for q, o in outcome.orls.items()}


def test_a_margin_shows_the_tie_it_contains_and_changes_no_tier(judgments: pd.DataFrame) -> None:
    plain = _states(judgments, None)
    shown = _states(judgments, 0.5)
    assert plain == {"eq": ["undecided"], "far": ["separated"], "few": ["undecided"]}
    # only the well-measured tie is shown equivalent; a tie of 6 comparisons stays undecided
    assert shown == {"eq": ["equivalent"], "far": ["separated"], "few": ["undecided"]}
    assert _states(judgments, 0.02)["eq"] == ["undecided"]  # the interval leaves +-0.02
    without = build_orls(judgments, BuildParameters(source="pairwise"))[1].orls
    within = build_orls(judgments, BuildParameters(source="pairwise", margin=0.5))[1].orls
    assert {q: o.tiers for q, o in without.items()} == {q: o.tiers for q, o in within.items()}
    assert [d.decision for d in within["eq"].decisions] == ["tied"]  # tied: not shown to differ


def test_the_audit_trail_of_the_report_shows_the_state(judgments: pd.DataFrame) -> None:
    orl = build_orls(judgments, BuildParameters(source="pairwise", margin=0.5))[1].orls["eq"]
    html = _orl_block(orl)
    assert '<td class="state">equivalent</td>' in html


def test_state_changes_between_two_builds() -> None:
    before = pd.DataFrame({"query": ["a", "a", "b"], "state": ["undecided", "separated", None]})
    after = pd.DataFrame({"query": ["a", "a", "b"], "state": ["equivalent", "separated", None]})
    table = state_changes(before, after)
    assert table.to_dict("records") == [
        {
            "query": "a",
            "separated_a": 1,
            "equivalent_a": 0,
            "undecided_a": 1,
            "separated_b": 1,
            "equivalent_b": 1,
            "undecided_b": 0,
        }
    ]
    assert state_changes(before, before).empty


@pytest.mark.parametrize("margin", [0.0, -1.0, float("nan"), float("inf")])
def test_a_margin_must_be_positive(margin: float) -> None:
    with pytest.raises(ConfigError, match="--margin must be a finite number > 0"):
        resolve_parameters(BuildParameters(source="pairwise", margin=margin))


def test_a_margin_needs_a_scored_method() -> None:
    with pytest.raises(ConfigError, match="--margin applies to scored methods"):
        resolve_parameters(BuildParameters(source="graded", margin=0.5))


def test_stored_parameters_without_a_margin_read_as_none() -> None:
    stored = resolve_parameters(BuildParameters(source="pairwise")).to_json()
    del stored["margin"]
    assert BuildParameters.from_json(stored).margin is None
