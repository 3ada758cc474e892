"""Limits are checked before any work starts, as one line (docs/reliability.md, "Limits").

Seeds, names, permutations, scheduler addresses, database URLs and the items
per query of the pairwise routes: each out-of-range value is ``Error: ...`` on
one line, exit 1, no traceback, and (for builds) nothing computed or stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import orlbuild.builders.build as build_module
from orlbuild.errors import ConfigError
from orlbuild.limits import (
    COUNT_LIMITS,
    ITEMS_PER_QUERY_MAX,
    PERMUTATIONS_MAX,
    SEED_MAX,
    check_items_per_query,
    items_per_query_limit,
)
from orlbuild.pipeline.config import load_config
from tests.pipeline_configs import pipeline_toml
from tests.store_cli import cli, cli_json, one_error_line

PAIRS = "query\twinner\tloser\n" + "".join(
    f"q{q}\td{i}\td{i + 1}\n" for q in range(2) for i in range(20)
)


@pytest.fixture
def store(migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Pairwise judgments; computing a build is a test failure from here on."""
    (tmp_path / "p.tsv").write_text(PAIRS)
    code, _, err = cli(migrated_db_url, "ingest", "pairwise", str(tmp_path / "p.tsv"))
    assert code == 0, err

    def never(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the build was computed before the limit was checked")

    monkeypatch.setattr(build_module, "build_orls", never)
    return migrated_db_url


BUILD_LIMITS = [
    (("--seed", "-5"), ("--seed", str(SEED_MAX), "-5")),
    (("--seed", str(2**70)), ("--seed", str(2**70))),
    (("--name", "x" * 600), ("invalid build name", "512")),
    (("--name", "   "), ("invalid build name",)),
    (("--scheduler", "file:///tmp/scheduler"), ("--scheduler", "tcp://")),
    (("--scheduler", "tcp://host:port"), ("port",)),
    (("--scheduler", "tcp://host:70000"), ("port",)),
]


def test_build_limits_fail_before_the_build_is_computed(store: str) -> None:
    for args, words in BUILD_LIMITS:
        code, out, err = cli(store, "build", "--source", "pairwise", *args)
        one_error_line(code, out, err, *words)
    assert cli_json(store, "orl", "list") == []


def test_the_largest_seed_is_accepted_and_stored(migrated_db_url: str, tmp_path: Path) -> None:
    (tmp_path / "p.tsv").write_text(PAIRS)
    assert cli(migrated_db_url, "ingest", "pairwise", str(tmp_path / "p.tsv"))[0] == 0
    code, _, err = cli(
        migrated_db_url, "build", "--source", "pairwise", "--seed", str(SEED_MAX), "--sig", "0"
    )
    assert code == 0, err
    assert cli_json(migrated_db_url, "orl", "list")[0]["id"] == 1


EVALUATION_LIMITS = [
    ("power", "-b", "x", "-s", "a", "-m", "nDCG@10", "--permutations", str(10**12)),
    ("compare", "-b", "x", "-s", "a", "-s", "b", "-m", "nDCG@10", "--seed", "-1"),
    ("report", "-b", "x", "--seed", str(2**40)),
    ("calibrate", "--seed", "-3"),
]


def test_evaluation_limits_areone_error_line(store: str) -> None:
    for args in EVALUATION_LIMITS:
        code, out, err = cli(store, *args)
        one_error_line(code, out, err)
        limit = PERMUTATIONS_MAX if "--permutations" in args else SEED_MAX
        assert str(limit) in err.replace(",", ""), args


def test_a_query_with_50000_items_is_refused_before_the_builders_allocate(
    migrated_db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.tsv"
    big.write_text(
        "query\twinner\tloser\n" + "".join(f"huge\td{i}\td{i + 1}\n" for i in range(0, 50_000, 2))
    )
    assert cli(migrated_db_url, "ingest", "pairwise", str(big))[0] == 0

    def never(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the builders were called")

    monkeypatch.setattr(build_module, "build_orls", never)
    code, out, err = cli(migrated_db_url, "build", "--source", "pairwise")
    default_limit = items_per_query_limit(
        tiering="simultaneous", uncertainty="fisher", mc_draws=2000, bootstrap=200
    )
    assert default_limit == ITEMS_PER_QUERY_MAX == 5_000  # was 598 before the null was blocked
    words = ("'huge'", "50,000 items", f"{default_limit:,} items per query", "GiB for it")
    one_error_line(code, out, err, *words)
    code, out, err = cli(
        migrated_db_url, "build", "--source", "pairwise", "--mc-draws", "100000",
        "--tiering", "simultaneous",  # the Monte Carlo draws are simultaneous's
    )  # fmt: skip
    words = ("'huge'", "50,000 items", "4 GiB per query", "2,945 items", "--mc-draws")
    one_error_line(code, out, err, *words)
    assert cli_json(migrated_db_url, "orl", "list") == []


def test_database_urls_are_one_line_and_never_show_the_password() -> None:
    for url in (
        "mysql://user:s3cr3t@host/db",
        "postgresql://user:s3cr3t@host:port/db",
        "postgresql://user:s3cr3t@host:99999999999999999999/db",
    ):
        code, out, err = cli(url, "status")
        one_error_line(code, out, err)
        assert "s3cr3t" not in err


MINIMAL = pipeline_toml(measure="nDCG@10")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("[compare]\nseed = 1e20\n", ("compare.seed",)),
        ("[compare]\nseed = -5\n", ("compare.seed", str(SEED_MAX))),
        ("[power]\nbudgets = [1]\nseed = 4294967296\n", ("power.seed",)),
        ("[compare]\npermutations = 1000000000000\n", ("compare.permutations", "1,000,000")),
        ("[execution]\nscheduler = 'file:///tmp/s'\n", ("execution.scheduler",)),
        ("[execution]\nscheduler = 'tcp://h:port'\n", ("execution.scheduler", "port")),
        ("[report]\npath = '.'\n", ("report.path", "directory")),
        ("[report]\npath = 'pairs.tsv'\n", ("report.path", "an input")),
        ("[report]\npath = 'orlbuild.db'\n", ("report.path", "the store")),
        ("[report]\npath = 'pipeline.toml'\n", ("report.path", "the pipeline config")),
    ],
)
def test_pipeline_limits(tmp_path: Path, extra: str, words: tuple[str, ...]) -> None:
    for name in ("pairs.tsv", "a.trec"):
        (tmp_path / name).write_text("x\n")
    config = tmp_path / "pipeline.toml"
    config.write_text(MINIMAL + extra)
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    code, out, err = cli("sqlite:///unused.db", "pipeline", str(config))
    one_error_line(code, out, err, *words)


def test_pipeline_build_seed_and_name(tmp_path: Path) -> None:
    for name in ("pairs.tsv", "a.trec"):
        (tmp_path / name).write_text("x\n")
    config = tmp_path / "pipeline.toml"
    text = MINIMAL.replace('name = "main"', f'name = "{"n" * 600}"').replace(
        'build = "main"', f'build = "{"n" * 600}"'
    )
    config.write_text(text + "[builds.parameters]\nseed = -5\n")
    with pytest.raises(ConfigError) as info:
        load_config(config)
    assert "builds[0].name" in str(info.value)
    assert "builds[0].parameters.seed" in str(info.value)


def test_the_item_limit_follows_the_memory_the_options_need() -> None:
    """3,000 items: too many for 100,000 Monte Carlo draws, fine for the leader test."""

    def check(items: int, tiering: str, method: str = "bt", draws: int = 2000) -> None:
        check_items_per_query(
            {"q": items}, method=method, tiering=tiering, uncertainty="fisher", mc_draws=draws,
            bootstrap=200,
        )  # fmt: skip

    check(3_000, "simultaneous")  # 598 items was the limit before the null was blocked
    with pytest.raises(ConfigError, match="3,000 items"):
        check(3_000, "simultaneous", draws=100_000)
    check(3_000, "leader", draws=100_000)
    check(50_000, "simultaneous", method="direct")  # no item-by-item arrays
    with pytest.raises(ConfigError, match=r"5,001 items.*5,000 items per query"):
        check(5_001, "leader")


COUNT_OVER_LIMITS = [
    (("build", "--source", "pairwise", "--mc-draws", str(10**9)), "mc_draws", "GiB"),
    (("build", "--source", "pairwise", "--bootstrap", str(10**7)), "bootstrap", "refits"),
    (("power", "-b", "x", "-s", "a", "-m", "nDCG@10", "--subsamples", str(10**9)), "subsamples",
     "years"),
    (("report", "-b", "x", "--subsamples", "100001"), "subsamples", "hours"),
    (("compare", "-b", "x", "-s", "a", "-s", "b", "-m", "nDCG@10", "--reference-resamples",
      "20000"), "reference_resamples", "hours"),
    (("compare", "-b", "x", "-s", "a", "-s", "b", "-m", "nDCG@10", "--permutations",
      str(10**12)), "permutations", "years"),
    (("calibrate", "--bootstrap", "50000"), "bootstrap", "GiB"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "name", "cost"), COUNT_OVER_LIMITS)
def test_counts_over_their_limit_are_one_line_before_any_work(
    store: str, args: tuple[str, ...], name: str, cost: str
) -> None:
    """Option, value, limit and what the value would cost, before a file is read or a build
    computed (``store`` fails the test if a build is computed)."""
    code, out, err = cli(store, *args)
    limit = COUNT_LIMITS[name]
    value = int(args[args.index(limit.option) + 1])
    one_error_line(code, out, err, limit.option, f"{value:,}", f"at most {limit.high:,}", cost)
    assert cli_json(store, "orl", "list") == []


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("[power]\nbudgets = [1]\nsubsamples = 1000000\n", ("power.subsamples", "100,000")),
        ("[compare]\nreference_resamples = 100000\n", ("compare.reference_resamples", "10,000")),
        ("[builds.parameters]\nmc_draws = 10000000\n", ("mc_draws", "100,000", "GiB")),
        ("[builds.parameters]\nbootstrap = 10000000\n", ("bootstrap", "10,000", "refits")),
        ("[power]\nbudgets = [1]\nsubsamples = 0\n", ("power.subsamples", ">= 1 (got 0)")),
    ],
)
def test_pipeline_counts_over_their_limit(
    tmp_path: Path, extra: str, words: tuple[str, ...]
) -> None:
    for name in ("pairs.tsv", "a.trec"):
        (tmp_path / name).write_text("x\n")
    config = tmp_path / "pipeline.toml"
    text = (
        MINIMAL.replace("[scoring]", extra + "[scoring]") if "builds." in extra else MINIMAL + extra
    )
    config.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(config)
    message = str(info.value)
    for word in words:
        assert word in message, message
