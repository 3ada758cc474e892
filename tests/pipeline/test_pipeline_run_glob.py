"""The pipeline's ``[[inputs]]`` take a glob for runs (docs/pipeline.md, "Many runs: a glob")."""

from __future__ import annotations

from pathlib import Path

import pytest

from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from orlbuild.pipeline.runner import ingest_input
from orlbuild.store import list_systems
from tests.pipeline_configs import pipeline_toml
from tests.stores import store_engine

HEAD = pipeline_toml(runs=())


def _run(tag: str) -> str:
    return f"q1 Q0 d1 1 2.5 {tag}\nq1 Q0 d2 2 1.5 {tag}\n"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "pairs.tsv").write_text("query\twinner\tloser\nq1\td1\td2\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for stem, tag in (("zeta", "z-tag"), ("alpha", "a-tag"), ("mid", "m-tag")):
        (runs / f"{stem}.trec").write_text(_run(tag))
    (runs / "notes.txt").write_text("not a run\n")
    return tmp_path


def _config(workdir: Path, inputs: str) -> Path:
    path = workdir / "pipeline.toml"
    path.write_text(HEAD + inputs, encoding="utf-8")
    return path


def _problems(workdir: Path, inputs: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(_config(workdir, inputs))
    return str(info.value)


@pytest.mark.parametrize(
    ("how", "systems"), [("stem", ["alpha", "mid", "zeta"]), ("tag", ["a-tag", "m-tag", "z-tag"])]
)
def test_a_glob_is_expanded_sorted_with_systems_named(
    workdir: Path, how: str, systems: list[str]
) -> None:
    config = load_config(
        _config(
            workdir, f'\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem_from = "{how}"\n'
        )
    )
    runs = [spec for spec in config.inputs if spec.kind == "run"]
    assert [spec.path.name for spec in runs] == ["alpha.trec", "mid.trec", "zeta.trec"]
    assert [spec.system for spec in runs] == systems
    assert config.scoring.systems == tuple(systems)


def test_the_runner_ingests_every_file_of_the_glob(workdir: Path, migrated_db_url: str) -> None:
    config = load_config(
        _config(workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem_from = "stem"\n')
    )
    with store_engine(migrated_db_url) as engine:
        outcomes = [ingest_input(engine, spec) for spec in config.inputs]
        assert [o.created for o in outcomes] == [True] * 4
        assert list_systems(engine) == ["alpha", "mid", "zeta"]
        again = [ingest_input(engine, spec) for spec in config.inputs]
        assert [o.created for o in again] == [False] * 4  # a rerun stores nothing new


def test_a_single_run_may_be_named_by_its_tag(workdir: Path) -> None:
    config = load_config(
        _config(
            workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/mid.trec"\nsystem_from = "tag"\n'
        )
    )
    assert [spec.system for spec in config.inputs if spec.kind == "run"] == ["m-tag"]


def test_a_glob_matching_nothing_is_an_error(workdir: Path) -> None:
    message = _problems(
        workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.run"\nsystem_from = "stem"\n'
    )
    assert "inputs[1].path: the glob 'runs/*.run' matches no file" in message


def test_a_glob_needs_system_from_not_system(workdir: Path) -> None:
    message = _problems(workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem = "x"\n')
    assert "inputs[1].system: names one run" in message
    message = _problems(workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\n')
    assert "inputs[1].system: is required for kind = 'run'" in message
    assert "system_from = 'tag'|'stem'" in message


def test_a_glob_is_for_runs_only(workdir: Path) -> None:
    message = _problems(workdir, '\n[[inputs]]\nkind = "graded"\npath = "runs/*.trec"\n')
    assert "inputs[1].path: a glob is for kind = 'run' (this is 'graded')" in message
    message = _problems(
        workdir, '\n[[inputs]]\nkind = "graded"\npath = "pairs.tsv"\nsystem_from = "tag"\n'
    )
    assert "inputs[1].system_from: only allowed for kind = 'run'" in message


def test_one_system_twice_is_an_error_naming_both_files(workdir: Path) -> None:
    (workdir / "runs" / "again.trec").write_text(_run("a-tag"))
    message = _problems(
        workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem_from = "tag"\n'
    )
    assert "inputs[1].system_from:" in message
    assert "again.trec and " in message and "alpha.trec both name system 'a-tag'" in message
    message = _problems(
        workdir,
        '\n[[inputs]]\nkind = "run"\npath = "runs/alpha.trec"\nsystem = "mid"\n'
        '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem_from = "stem"\n',
    )
    assert (
        "inputs[2].system: 'mid' already has a run in inputs[1] (alpha.trec): mid.trec would "
        "be a second one (one run per system)" in message
    )


def test_conflicting_tags_are_reported_with_the_key(workdir: Path) -> None:
    (workdir / "runs" / "mixed.trec").write_text(_run("one") + _run("two"))
    message = _problems(
        workdir, '\n[[inputs]]\nkind = "run"\npath = "runs/*.trec"\nsystem_from = "tag"\n'
    )
    assert "inputs[1].system_from:" in message
    assert "mixed.trec, line 3: two run tags in one file: 'one' (line 1) and 'two'" in message
