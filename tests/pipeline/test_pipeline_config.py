"""Validation of the pipeline config file (orlbuild.pipeline.config)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orlbuild.errors import ConfigError
from orlbuild.pipeline.config import load_config
from orlbuild.pipeline.specs import PipelineConfig
from tests.pipeline_configs import MINIMAL

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name in ("pairs.tsv", "a.trec", "b.trec"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    return tmp_path


def write(workdir: Path, text: str) -> Path:
    path = workdir / "pipeline.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(workdir: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(workdir, text))
    return str(info.value)


def test_sample_config_is_valid_and_complete() -> None:
    config = load_config(SAMPLE / "pipeline.toml")
    assert isinstance(config, PipelineConfig)
    assert {i.kind for i in config.inputs} == {"pairwise", "listwise", "graded", "run"}
    assert all(i.path.is_file() for i in config.inputs)
    assert config.scoring.systems == ("hybrid", "dense", "bm25", "tfidf")
    assert config.scoring.build in {b.name for b in config.builds}
    assert config.database_url == f"sqlite:///{SAMPLE / 'orlbuild.db'}"
    assert config.report is not None and config.report.path == SAMPLE / "report.html"
    assert config.power is not None and config.power.measures == config.measures


def test_defaults_and_relative_paths(workdir: Path) -> None:
    config = load_config(write(workdir, MINIMAL))
    assert config.database_url == f"sqlite:///{workdir.resolve() / 'orlbuild.db'}"
    assert config.inputs[0].path == (workdir / "pairs.tsv").resolve()
    assert config.inputs[0].collection == "default"
    assert config.builds[0].method is None  # the builder picks its own default
    assert config.scoring.systems == ("a",)  # every run input
    assert config.scoring.missing == "zero"
    assert (config.compare.test, config.compare.permutations, config.compare.correction) == (
        "randomization",
        1000,
        "holm",
    )
    assert config.power is None and config.report is None


def test_dataclasses_are_frozen(workdir: Path) -> None:
    config = load_config(write(workdir, MINIMAL))
    with pytest.raises(AttributeError):
        config.measures = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.builds[0].parameters["sig"] = 0.1  # type: ignore[index]


def test_database_url_and_path(workdir: Path) -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    config = load_config(write(workdir, MINIMAL + f'\n[database]\nurl = "{url}"\n'))
    assert config.database_url == url and not config.database_is_sqlite_file
    config = load_config(write(workdir, MINIMAL + '\n[database]\npath = "data/x.db"\n'))
    assert config.database_url == f"sqlite:///{workdir.resolve() / 'data' / 'x.db'}"
    message = problems(workdir, MINIMAL + f'\n[database]\nurl = "{url}"\npath = "x.db"\n')
    assert "database: give either url or path" in message


def test_scored_runs_come_from_the_build_collection(workdir: Path) -> None:
    text = MINIMAL.replace('system = "a"', 'system = "a"\ncollection = "elsewhere"')
    message = problems(workdir, text)
    assert "scoring.systems: no systems to score" in message
    text = text.replace('build = "main"', 'build = "main"\nsystems = ["a"]')
    assert "'a' is not a run input in collection 'default'; allowed: none" in problems(
        workdir, text
    )


def test_collection_default_and_override(workdir: Path) -> None:
    config = load_config(write(workdir, 'collection = "web"\n' + MINIMAL))
    assert [i.collection for i in config.inputs] == ["web", "web"]
    assert config.builds[0].collection == "web"
    text = 'collection = "web"\n' + MINIMAL.replace(
        'kind = "pairwise"', 'kind = "pairwise"\ncollection = "other"'
    ).replace('source = "pairwise"', 'source = "pairwise"\ncollection = "other"')
    text = text.replace('system = "a"', 'system = "a"\ncollection = "other"')
    config = load_config(write(workdir, text))
    assert [i.collection for i in config.inputs] == ["other", "other"]
    assert config.builds[0].collection == "other"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('kind = "pairwise"', 'kind = "pairwse"'),
            "inputs[0].kind: must be one of listwise, pairwise",
        ),
        (('path = "pairs.tsv"', 'path = "nope.tsv"'), "inputs[0].path: file not found"),
        (('system = "a"', ""), "inputs[1].system: is required for kind = 'run'"),
        (
            ('path = "pairs.tsv"', 'path = "pairs.tsv"\nsystem = "x"'),
            "inputs[0].system: only allowed for kind = 'run'",
        ),
        (
            ('path = "pairs.tsv"', 'path = "pairs.tsv"\nformat = "trec"'),
            "inputs[0].format: must be one of tsv, csv, jsonl, json, arena, prefs-release, "
            "trec-prefs (got 'trec')",
        ),
        (
            ('source = "pairwise"', 'source = "pairs"'),
            "builds[0].source: must be one of graded, listwise, pairwise",
        ),
        (
            ('source = "pairwise"', 'source = "pairwise"\nmethod = "plackett-luce"'),
            "builds[0].method: must be one of bt, rank-centrality (got 'plackett-luce')",
        ),
        (
            ('source = "pairwise"', 'source = "graded"'),
            "builds[0].source: no [[inputs]] of kind 'graded'",
        ),
        (('build = "main"', 'build = "mian"'), "scoring.build: must be one of main (got 'mian')"),
        (
            ('build = "main"', 'build = "main"\nsystems = ["a", "zz"]'),
            "scoring.systems: 'zz' is not a run input in collection 'default'; allowed: a",
        ),
        (
            ('build = "main"', 'build = "main"\nmissing = "drop"'),
            "scoring.missing: must be one of zero, skip",
        ),
        (
            ('measures = ["RDQm2-a1@10"]', "measures = []"),
            "measures: must list at least one measure",
        ),
        (('measures = ["RDQm2-a1@10"]', "measures = 5"), "measures: must be an array (got 5)"),
        (
            ('measures = ["RDQm2-a1@10"]', 'measures = ["P@5", "P@5"]'),
            "measures: lists 'P@5' twice",
        ),
        (
            ('measures = ["RDQm2-a1@10"]', 'measures = ["nDCG@10", "RDQm3@10"]'),
            "measures: bad measure 'RDQm3@10': unknown measure",
        ),
        (('measures = ["RDQm2-a1@10"]', ""), "measures: is required"),
        (('[scoring]\nbuild = "main"', ""), "scoring: a [scoring] table is required"),
        (
            ('measures = ["RDQm2-a1@10"]', 'measures = ["P@5"]\nmesures = 1'),
            "mesures: unknown key; allowed here:",
        ),
        (
            ('name = "main"', 'name = "main"\nsig = 0.1'),
            "builds[0].sig: unknown key; allowed here: collection",
        ),
    ],
)
def test_each_problem_names_the_key_and_what_is_allowed(
    workdir: Path, change: tuple[str, str], expected: str
) -> None:
    old, new = change
    assert old in MINIMAL
    assert expected in problems(workdir, MINIMAL.replace(old, new, 1))


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (
            "[compare]\ntest = 'wilcoxon'",
            "compare.test: must be one of randomization, t, tukey-hsd, max-t (got 'wilcoxon')",
        ),
        ("[compare]\npermutations = 0", "compare.permutations: must be >= 1 (got 0)"),
        (
            "[compare]\nreference_resamples = -1",
            "compare.reference_resamples: must be >= 0 (got -1)",
        ),
        ("[compare]\npermutations = 1.5", "compare.permutations: must be an integer (got 1.5)"),
        ("[compare]\npermutations = true", "compare.permutations: must be an integer (got True)"),
        (
            "[compare]\ncorrection = 'fdr'",
            "compare.correction: must be one of holm, bonferroni, none",
        ),
        (
            "[compare]\ntest = 'tukey-hsd'\ncorrection = 'holm'",
            "compare.correction: does not apply to test 'tukey-hsd', whose p-values",
        ),
        (
            "[compare]\ntest = 'max-t'\ncorrection = 'bonferroni'",
            "compare.correction: does not apply to test 'max-t', whose p-values",
        ),
        ("[compare]\nalpha = 1.5", "compare.alpha: must be between 0 and 1"),
        ("[compare]\nseed = 'x'", "compare.seed: must be an integer"),
        ("[compare]\nmethod = 't'", "compare.method: unknown key; allowed here: alpha, correction"),
        ("[power]\nsubsamples = 10", "power.budgets: is required"),
        ("[power]\nbudgets = [10, 0]", "power.budgets: must be a non-empty list of integers >= 1"),
        (
            "[power]\nbudgets = [10]\nmeasures = ['nDCG@10']",
            "power.measures: 'nDCG@10' is not in the top-level",
        ),
        ("[report]\npath = ''", "report.path: must not be empty"),
        ("[builds.parameters]\nsig = 2", "builds[0].parameters.sig: must be in [0, 1)"),
        (
            "[builds.parameters]\nuncertainty = 'exact'",
            "parameters.uncertainty: must be one of fisher, bootstrap",
        ),
        (
            "[builds.parameters]\ngrade_agg = 'median'",
            "parameters.grade_agg: unknown key; allowed here:",
        ),
        ("[builds.parameters]\nbootstrap = 0", "builds[0].parameters.bootstrap: must be >= 2"),
        ("[database]\nfile = 'x.db'", "database.file: unknown key; allowed here: path, url"),
        (
            "[builds.parameters]\ncluster = 'annotators'\nuncertainty = 'bootstrap'",
            "builds[0].parameters: --cluster annotators applies to --method bt",
        ),
    ],
)
def test_section_problems(workdir: Path, section: str, expected: str) -> None:
    text = (
        MINIMAL.replace('[scoring]\nbuild = "main"\n', "")
        + f'\n{section}\n\n[scoring]\nbuild = "main"\n'
    )
    if section.startswith("[builds.parameters]"):
        text = MINIMAL.replace('source = "pairwise"\n', f'source = "pairwise"\n{section}\n')
    assert expected in problems(workdir, text)


def test_all_problems_reported_at_once(workdir: Path) -> None:
    text = MINIMAL.replace('kind = "pairwise"', 'kind = "x"').replace(
        'build = "main"', 'build = "y"'
    )
    message = problems(workdir, text)
    assert "problems in the pipeline config" in message
    assert "inputs[0].kind" in message and "scoring.build" in message
    assert str((workdir / "pipeline.toml").resolve()) in message


def test_duplicate_build_names_and_systems(workdir: Path) -> None:
    text = MINIMAL + '\n[[builds]]\nname = "main"\nsource = "pairwise"\n'
    text += '\n[[inputs]]\nkind = "run"\npath = "b.trec"\nsystem = "a"\n'
    message = problems(workdir, text)
    assert "builds[1].name: 'main' is used by another build" in message
    assert "inputs[2].system: 'a' already has a run in inputs[1]" in message


def test_parameters_are_typed(workdir: Path) -> None:
    text = MINIMAL.replace(
        'source = "pairwise"\n',
        'source = "pairwise"\nmethod = "rank-centrality"\n[builds.parameters]\n'
        'sig = 0\nuncertainty = "bootstrap"\nbootstrap = 50\nseed = 3\nreg = 0.1\n',
    )
    config = load_config(write(workdir, text))
    assert dict(config.builds[0].parameters) == {
        "sig": 0,
        "uncertainty": "bootstrap",
        "bootstrap": 50,
        "seed": 3,
        "reg": 0.1,
    }


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('measures = ["a"\n[scoring]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line"):
        load_config(bad)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_config(binary)


def test_sample_config_moves_with_its_data(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE, tmp_path / "copy", ignore=shutil.ignore_patterns("*.db*", "*.html"))
    config = load_config(tmp_path / "copy" / "pipeline.toml")
    assert all(str(i.path).startswith(str((tmp_path / "copy").resolve())) for i in config.inputs)


def test_compare_defaults_follow_the_number_of_systems(workdir: Path) -> None:
    """More than two scored systems: max-t (step-down Tukey HSD), no correction (issue 15)."""
    (workdir / "c.trec").write_text("x\n", encoding="utf-8")
    runs = "".join(
        f'\n[[inputs]]\nkind = "run"\npath = "{s}.trec"\nsystem = "{s}"\n' for s in ("b", "c")
    )
    three = MINIMAL.replace("[[builds]]", runs + "\n[[builds]]", 1)
    config = load_config(write(workdir, three))
    assert (config.compare.test, config.compare.correction) == ("max-t", None)
    explicit = load_config(write(workdir, three + "\n[compare]\ntest = 'randomization'\n"))
    assert (explicit.compare.test, explicit.compare.correction) == ("randomization", "holm")
    message = problems(workdir, three + "\n[compare]\ncorrection = 'bonferroni'\n")
    assert "(the default test for more than two systems)" in message


# --- one vocabulary: the TOML accepts exactly what `orlbuild build` and the library accept ---


def test_uncertainty_ep_is_accepted_as_by_orlbuild_build(workdir: Path) -> None:
    """Regression: `orlbuild build --uncertainty ep` worked, the pipeline TOML rejected it."""
    text = MINIMAL.replace(
        'source = "pairwise"\n', 'source = "pairwise"\n[builds.parameters]\nuncertainty = "ep"\n'
    )
    config = load_config(write(workdir, text))
    assert config.builds[0].parameters["uncertainty"] == "ep"


def test_uncertainty_the_method_does_not_support_is_reported_by_the_builder(
    workdir: Path,
) -> None:
    text = MINIMAL.replace(
        'source = "pairwise"\n',
        'source = "pairwise"\nmethod = "rank-centrality"\n'
        '[builds.parameters]\nuncertainty = "ep"\n',
    )
    message = problems(workdir, text)
    assert "builds[0].parameters: --uncertainty 'ep' is not valid for --method rank-centrality" in (
        message
    )


@pytest.mark.parametrize("name", ["uncertainty", "tiering", "solver", "cluster", "on_error"])
def test_every_word_the_builder_knows_is_a_toml_choice(name: str) -> None:
    from orlbuild import vocabulary
    from orlbuild.builders.parameter_specs import BUILD_OPTIONS
    from orlbuild.pipeline import config

    enum = {
        "uncertainty": vocabulary.Uncertainty,
        "tiering": vocabulary.TieringProcedure,
        "solver": vocabulary.Solver,
        "cluster": vocabulary.Cluster,
        "on_error": vocabulary.OnError,
    }[name]
    # the TOML reads the vocabulary of the one table of build options
    assert BUILD_OPTIONS[name].choices[0] is enum
    assert name in config._PARAMETERS_BY_SOURCE["pairwise"]


def test_on_error_words_are_the_command_line_words(workdir: Path) -> None:
    text = MINIMAL.replace(
        'source = "pairwise"\n', 'source = "pairwise"\n[builds.parameters]\non_error = "raise"\n'
    )
    assert "parameters.on_error: must be one of stop, skip (got 'raise')" in problems(workdir, text)


def test_missing_and_precision_choices_come_from_the_scoring_vocabulary(workdir: Path) -> None:
    from scoring.vocabulary import MissingPolicy, ScorePrecisionName

    for word in MissingPolicy:
        text = MINIMAL + f'missing = "{word.value}"\n'
        assert load_config(write(workdir, text)).scoring.missing == word.value
    for precision in ScorePrecisionName:
        text = MINIMAL + f'score_precision = "{precision.value}"\n'
        assert load_config(write(workdir, text)).scoring.score_precision == precision.value


def test_every_build_option_of_the_command_line_is_a_toml_parameter(workdir: Path) -> None:
    """Regression: --mc-draws and --single-step had no TOML counterpart."""
    text = MINIMAL.replace(
        'source = "pairwise"\n',
        'source = "pairwise"\n[builds.parameters]\nmc_draws = 500\nstep_down = false\n',
    )
    parameters = load_config(write(workdir, text)).builds[0].parameters
    assert parameters["mc_draws"] == 500 and parameters["step_down"] is False


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mc_draws = 50", "builds[0].parameters.mc_draws: must be >= 100 (got 50)"),
        ("reg = inf", "builds[0].parameters.reg: must be a finite number >= 0 (got inf)"),
        ("step_down = 1", "builds[0].parameters.step_down: must be true or false (got 1)"),
    ],
)
def test_numeric_parameters_are_checked_by_the_builders_rules(
    workdir: Path, line: str, expected: str
) -> None:
    text = MINIMAL.replace(
        'source = "pairwise"\n', f'source = "pairwise"\n[builds.parameters]\n{line}\n'
    )
    assert expected in problems(workdir, text)
