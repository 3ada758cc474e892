"""Issue 15's regression: 63 systems on 50 queries, one clearly best and one clearly worst.

Before Tukey HSD was the default, ``report`` said "0 of 3906 differences
significant" for such a panel: 1,000 sign flips cannot give a Holm-adjusted
p-value below 1953 / 1001. Now ``compare`` and ``report`` find the pair, and the
sign-flip test asked for explicitly gets enough flips to reject, and says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from store_cli import cli, cli_json

from orlbuild.builders.parameters import BuildParameters
from orlbuild.services.builds import build_and_store
from orlbuild.services.ingests import ingest_file
from tests.report.html_page import Page
from tests.stores import store_engine

N_QUERIES = 50
N_SYSTEMS = 63
MIDDLE = [f"run{k:02d}" for k in range(1, N_SYSTEMS - 1)]
SYSTEMS = ["best", *MIDDLE, "worst"]
MEASURE = "RDQm2-a1@10"


@pytest.fixture(scope="module")
def many_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A migrated SQLite store: graded ORLs and 63 runs of graded quality."""
    from orlbuild.store.schema import upgrade

    folder = tmp_path_factory.mktemp("many")
    url = f"sqlite:///{folder / 'many.db'}"
    upgrade(url)
    rng = np.random.default_rng(15)
    qrels, ideal = [], {}
    for q in range(N_QUERIES):
        query = f"q{q:02d}"
        grades = rng.permutation([3, 3, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0])
        items = [f"{query}d{i}" for i in range(len(grades))]
        qrels += [f"{query} 0 {item} {grade}" for item, grade in zip(items, grades, strict=True)]
        ideal[query] = [items[i] for i in np.argsort(-grades, kind="stable")]
    runs = {"best": ideal, "worst": {q: v[::-1] for q, v in ideal.items()}}
    for k, name in enumerate(MIDDLE, start=1):
        shuffled = k / len(MIDDLE)  # share of queries whose list is shuffled
        runs[name] = {
            q: list(rng.permutation(v)) if rng.random() < shuffled else v for q, v in ideal.items()
        }
    (folder / "graded.qrels").write_text("\n".join(qrels) + "\n")
    with store_engine(url) as engine:
        ingest_file(engine, "graded", folder / "graded.qrels")
        for name, lists in runs.items():
            path = folder / f"{name}.trec"
            path.write_text(
                "".join(
                    f"{q} Q0 {item} {rank} {100 - rank} {name}\n"
                    for q, items in lists.items()
                    for rank, item in enumerate(items, start=1)
                )
            )
            ingest_file(engine, "run", path, system=name)
        build_and_store(engine, BuildParameters(source="graded"), name="graded")
    return url


def system_args() -> list[str]:
    return [arg for name in SYSTEMS for arg in ("-s", name)]


@pytest.mark.parametrize("test", [None, "tukey-hsd"])
def test_compare_finds_the_best_worst_pair_family_wise(many_store: str, test: str | None) -> None:
    chosen = [] if test is None else ["--test", test]
    doc = cli_json(many_store, "compare", "-b", "graded", *system_args(), "-m", MEASURE, *chosen)
    assert doc["settings"]["test"] == (test or "max-t") and doc["settings"]["correction"] is None
    pairs = {(p["a"], p["b"]): p for p in doc["pairs"]}
    assert len(pairs) == N_SYSTEMS * (N_SYSTEMS - 1) // 2
    extreme = pairs[("best", "worst")]
    assert extreme["significant"] and extreme["p_adjusted"] < 0.01
    tiers = {s["system"]: s for s in doc["systems"]}
    assert tiers["best"]["rank"] == 1 and tiers["best"]["tier"] == 1
    assert tiers["worst"]["rank"] == N_SYSTEMS and tiers["worst"]["tier"] > 1
    assert not set(tiers["best"]["letters"]) & set(tiers["worst"]["letters"])
    assert doc["warnings"] == []


def test_sign_flips_are_raised_until_holm_can_reject(many_store: str) -> None:
    args = ["compare", "-b", "graded", *system_args(), "-m", MEASURE, "--test", "randomization"]
    code, out, err = cli(many_store, *args, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    # Holm over 1953 pairs: 1953 / (B + 1) < 0.005 needs B = 390,600 flips
    assert doc["settings"]["permutations"] == 390_600
    assert doc["settings"]["correction"] == "holm"
    assert "raised to 390,600" in doc["settings"]["notes"][0]
    assert "Note: randomization: 1,000 permutations raised to 390,600" in err
    extreme = next(p for p in doc["pairs"] if (p["a"], p["b"]) == ("best", "worst"))
    assert extreme["significant"]


def test_report_finds_the_pair_and_shows_tiers_and_a_heat_map(
    many_store: str, tmp_path: Path
) -> None:
    target = tmp_path / "many.html"
    code, _, err = cli(many_store, "report", "-b", "graded", "-m", MEASURE, "-o", str(target))
    assert code == 0, err
    page = Page(target.read_text())
    glance = re.search(r"(\d+) of (\d+)", target.read_text())
    assert glance is not None and int(glance.group(2)) == 1953 and int(glance.group(1)) > 0
    table = page.table(id="systems-table")
    # beyond 10 systems the letters give way to rank intervals (issue 36)
    assert table[0] == ["#", "system", MEASURE, "tier", "ranks"]
    rows = {r[1]: r for r in table[1:]}
    best_tier, best_ranks = rows["best"][3:5]
    worst_tier, worst_ranks = rows["worst"][3:5]
    assert best_tier == "1" and int(worst_tier) > 1
    best_high = int(best_ranks.split("–")[1])
    worst_low = int(worst_ranks.split("–")[0])
    assert best_high < worst_low  # significant, and the intervals say so
    heat = page.table(**{"class": "diffmap", "data-measure": MEASURE})
    assert len(heat) == 1 + N_SYSTEMS and heat[1][0] == "1. best"  # every system, best first
    assert "Tukey HSD" in target.read_text()
