"""Benchmark: every stage of the sample pipeline against an earlier commit, as whole processes.

Run: ``python tests/benchmarks/bench_pipeline_stages.py --baseline REV``
(``--help`` lists the options). Issue 24: "no stage gets slower on the sample
pipeline (whole-process time, ratio against the previous commit in the same
run)".

The sources of ``REV`` (``pyproject.toml``, ``orlbuild/``, ``scoring/``,
``migrations/``) are taken with ``git archive`` into a scratch folder and run
from there with ``PYTHONPATH`` pointing at it, in the same Python environment
as this checkout, so both sides share every dependency and differ only in the
project's own code. Both sides compile their bytecode first, as after a
normal install.

Each round runs, for this checkout and for the baseline in alternating order,
the stages of ``sample_data/pipeline.toml`` one command each against a new
SQLite store (made by ``orlbuild db upgrade``, untimed; ``orlbuild ingest``
of the four inputs, ``build`` of the three builds, ``score``, ``compare``,
``power``, ``report``), then ``eval`` of the graded qrels against the four
runs, then the whole ``orlbuild pipeline`` on a fresh copy of the sample
folder. Every command is timed from its start to its
exit (wall, and CPU of the process and its children). Printed per stage: the
median wall and CPU time of each side and the ratios this / baseline, with a
verdict: ``slower`` when both the wall and the CPU ratio exceed
``1 + --tolerance`` (the noise between rounds of one side on a quiet machine
is a few per cent). The load average is printed before and after; on a shared
machine quote the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data"
SYSTEMS = ("hybrid", "dense", "bm25", "tfidf")
MEASURES = ("RDQm2-a1@10", "RDQm1@10", "nDCG@10", "AP@10")


def _repeat(flag: str, values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in (flag, value)]


def stages(data: Path, scratch: Path) -> list[tuple[str, list[str]]]:
    """The sample pipeline's stages as separate commands, in order (names, arguments)."""
    runs = [str(data / "runs" / f"{system}.trec") for system in SYSTEMS]
    systems = _repeat("-s", SYSTEMS)
    measures = _repeat("-m", MEASURES)
    build = ["-b", "sample-pairwise"]
    return [
        ("ingest pairwise", ["ingest", "pairwise", str(data / "pairwise.tsv"), "-c", "sample"]),
        ("ingest listwise", ["ingest", "listwise", str(data / "listwise.tsv"), "-c", "sample"]),
        ("ingest graded", ["ingest", "graded", str(data / "graded.qrels"), "-c", "sample"]),
        ("ingest run (4 files)", ["ingest", "run", *runs, "--system-from", "stem", "-c", "sample"]),
        (
            "build pairwise",
            [
                "build", "-c", "sample", "--source", "pairwise", "--method", "bt",
                "--name", "sample-pairwise", "--sig", "0.05", "--tiering", "model",
                "--uncertainty", "fisher", "--seed", "7",
            ],
        ),
        (
            "build listwise",
            [
                "build", "-c", "sample", "--source", "listwise", "--method", "bt",
                "--name", "sample-listwise",
            ],
        ),
        (
            "build graded",
            [
                "build", "-c", "sample", "--source", "graded", "--name", "sample-graded",
                "--grade-agg", "median",
            ],
        ),
        ("score", ["score", *build, "-s", "hybrid", *measures]),
        (
            "compare",
            [
                "compare", *build, *systems, *measures, "--test", "randomization",
                "--permutations", "1000", "--correction", "holm", "--seed", "42",
            ],
        ),
        (
            "power",
            [
                "power", *build, *systems, *measures, "--budgets", "5,10,15,20,25,30",
                "--subsamples", "200", "--permutations", "500", "--seed", "42",
            ],
        ),
        (
            "report",
            [
                "report", *build, "-o", str(scratch / "report.html"), *measures,
                "--budgets", "5,10,15,20,25,30", "--subsamples", "200", "--seed", "42",
            ],
        ),
        ("eval (4 runs)", ["eval", str(data / "graded.qrels"), *runs, *measures]),
    ]  # fmt: skip


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole process; a failure stops the benchmark."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, _children_cpu() - cpu


def baseline_sources(revision: str, into: Path) -> Path:
    """The project's code at REVISION, unpacked under INTO."""
    archive = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "archive",
            revision,
            "pyproject.toml",
            "orlbuild",
            "scoring",
            "migrations",
        ],
        capture_output=True,
        check=True,
    ).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def side_env(source: Path) -> dict[str, str]:
    """The environment of one side's processes: its sources first on the path."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ORLBUILD_DB", "ORLBUILD_SCHEDULER")
    }
    env["PYTHONPATH"] = str(source)
    return env


def one_round(source: Path, scratch: Path) -> dict[str, tuple[float, float]]:
    """Every stage of one side once, on a new store and a new copy of the sample folder."""
    scratch.mkdir(parents=True)
    data = scratch / "sample_data"
    shutil.copytree(SAMPLE, data, ignore=shutil.ignore_patterns("orlbuild.db", "report.html"))
    env = side_env(source)
    entry = [sys.executable, "-c", "from orlbuild.cli.main import run; run()"]
    store = ["--db", f"sqlite:///{scratch / 'stages.db'}", "--quiet"]
    timed([*entry, *store, "db", "upgrade"], env, scratch)  # not a pipeline stage: untimed
    times = {
        name: timed([*entry, *store, *arguments], env, scratch)
        for name, arguments in stages(data, scratch)
    }
    times["pipeline (whole)"] = timed(
        [*entry, "--quiet", "pipeline", str(data / "pipeline.toml")], env, scratch
    )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline", default="HEAD~1", help="the commit to compare with (default HEAD~1)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds (medians are printed)")
    parser.add_argument(
        "--tolerance", type=float, default=0.10, help="slower: both ratios above 1 + this"
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="orlbuild-stages-") as folder:
        scratch = Path(folder)
        baseline = baseline_sources(args.baseline, scratch / "baseline")
        sides = {"this": ROOT, "baseline": baseline}
        for source in sides.values():
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", "orlbuild", "scoring"],
                cwd=source,
                check=True,
            )
        results: dict[str, list[dict[str, tuple[float, float]]]] = {side: [] for side in sides}
        for number in range(args.repeat + 1):  # an untimed first round: caches, bytecode
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for side in order:
                times = one_round(sides[side], scratch / f"round{number}-{side}")
                if number:
                    results[side].append(times)
        print(f"load average after: {os.getloadavg()}")
        print(f"baseline {args.baseline}, {args.repeat} rounds, medians (wall / CPU seconds)")
        print(f"{'stage':22} {'this':>15} {'baseline':>15} {'ratio wall/cpu':>16}  verdict")
        slower = []
        for stage in results["this"][0]:
            ours = [statistics.median(times[stage][k] for times in results["this"]) for k in (0, 1)]
            theirs = [
                statistics.median(times[stage][k] for times in results["baseline"]) for k in (0, 1)
            ]
            ratios = [ours[k] / theirs[k] for k in (0, 1)]
            verdict = "slower" if min(ratios) > 1 + args.tolerance else "ok"
            if verdict == "slower":
                slower.append(stage)
            print(
                f"{stage:22} {ours[0]:6.2f} / {ours[1]:6.2f} {theirs[0]:6.2f} / {theirs[1]:6.2f}"
                f" {ratios[0]:7.2f} / {ratios[1]:5.2f}  {verdict}"
            )
        print("no stage slower" if not slower else f"slower: {', '.join(slower)}")


if __name__ == "__main__":
    main()
