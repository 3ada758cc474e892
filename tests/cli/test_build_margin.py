"""``orlbuild build --margin``: stored in the parameters; audit and ``orl diff`` show the three
states (SQLite and PostgreSQL)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from store_cli import cli, cli_json

from tests.builders.simulation import simulate_round_robin
from tests.builders.store_data import store_judgments


def test_margin_is_stored_and_shown_by_audit_and_diff(migrated_db_url: str) -> None:
    url = migrated_db_url
    rng = np.random.default_rng(0)
    frame = pd.concat(
        [
            simulate_round_robin(rng, np.zeros(2), 4000, query="eq"),
            simulate_round_robin(rng, np.array([2.0, -2.0]), 200, query="far"),
        ],
        ignore_index=True,
    )
    store_judgments(url, "pairwise", frame)
    # the three states come from the max-t test: simultaneous (a posterior build runs it only
    # with --margin, issue 32)
    plain = cli_json(
        url, "build", "--source", "pairwise", "--name", "plain", "--tiering", "simultaneous"
    )
    shown = cli_json(
        url, "build", "--source", "pairwise", "--name", "shown", "--margin", "0.5",
        "--tiering", "simultaneous",
    )  # fmt: skip
    assert plain["margin"] is None and shown["margin"] == 0.5
    assert plain["decision_states"] == {"separated": 1, "equivalent": 0, "undecided": 1}
    assert shown["decision_states"] == {"separated": 1, "equivalent": 1, "undecided": 0}
    assert cli_json(url, "orl", "show", "shown")["build"]["parameters"]["margin"] == 0.5
    assert cli_json(url, "orl", "show", "plain")["build"]["parameters"]["margin"] is None
    audit = cli_json(url, "audit", "shown")
    assert {d["query"]: (d["decision"], d["state"]) for d in audit["decisions"]} == {
        "eq": ("tied", "equivalent"),
        "far": ("separated", "separated"),
    }
    code, out, err = cli(url, "audit", "shown")
    assert code == 0, err
    assert "equivalent" in out
    diff = cli_json(url, "orl", "diff", "plain", "shown")
    assert diff["moved"] == []
    assert diff["states"] == [
        {
            "query": "eq",
            "separated_a": 0,
            "equivalent_a": 0,
            "undecided_a": 1,
            "separated_b": 0,
            "equivalent_b": 1,
            "undecided_b": 0,
        }
    ]
    code, _, err = cli(url, "build", "--source", "pairwise", "--margin", "-1")
    assert code != 0 and "--margin must be a finite number > 0" in err
