"""Benchmark: ``orlbuild eval`` against the ir_measures CLI on long and short document ids.

Run: ``python tests/benchmarks/bench_eval_long_ids.py`` (``--help`` lists the
options). Issue 24: a 600,000-line TREC run (6,000 queries x 100 documents)
whose document ids are MS MARCO-like (``msmarco_passage_NN_NNNNNNNNN``, about
600,000 distinct), graded qrels of 50 judgments per query (half of them
retrieved), scores with two decimals (so ties are common, and broken by
document id), measures nDCG@10 and AP; and the same shape with short ids
(``d123``). orlbuild computes the trec_eval nDCG@10 (native grades as linear
gains: ``nDCG(grade=native,gain=linear)@10``, which is what the ir_measures
CLI's ``nDCG@10`` is), so both tools compute the same values.

Both tools run as whole processes on the same files, interleaved round by
round (``--repeat`` rounds, one untimed round first so both have compiled
bytecode). Printed: the median wall time of each and the ratio orlbuild /
ir_measures, and the median CPU time (user + system) of each with its ratio,
which moves less than wall time on a loaded machine. Target: <= 1.0 on both
id shapes.

Both tools are also checked to agree: the mean nDCG@10 and AP they print
must match to 4 decimals. The machine this runs on may be shared: the load
average is printed before and after, and ratios (both tools measured in the
same rounds) are the figures to quote.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).parent
MEASURES = ("nDCG@10", "AP")
#: orlbuild's names for the ir_measures CLI's measures.
ORLBUILD_MEASURES = {"nDCG@10": "nDCG(grade=native,gain=linear)@10", "AP": "AP"}
#: Every process runs with bytecode as after a normal install (see bench_eval_cli.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def long_id(numbers: np.ndarray) -> np.ndarray:
    """MS MARCO v2-like passage ids: ``msmarco_passage_NN_NNNNNNNNN`` (shard, offset)."""
    shards = np.char.zfill((numbers % 70).astype(str), 2)
    offsets = np.char.zfill((numbers * 7919 % 999_999_937).astype(str), 9)
    return np.char.add(np.char.add("msmarco_passage_", np.char.add(shards, "_")), offsets)


def short_id(numbers: np.ndarray) -> np.ndarray:
    """Short ids: ``d123``."""
    return np.char.add("d", numbers.astype(str))


def write_files(
    folder: Path, ids: str, n_queries: int = 6000, n_docs: int = 100, n_judged: int = 50
) -> tuple[Path, Path]:
    """Qrels and one TREC run; ``ids`` is ``long`` (unique per query) or ``short``.

    Long ids: every retrieved document is distinct across queries (about
    ``n_queries * n_docs`` ids), as in an MS MARCO run. Short ids: each query
    draws from a pool of ``4 * n_docs`` ids shared by all queries.
    """
    rng = np.random.default_rng(0 if ids == "long" else 1)
    queries = (1_000_000 + rng.choice(9_000_000, size=n_queries, replace=False)).astype(str)
    if ids == "long":
        numbers = rng.permutation(n_queries * (n_docs + n_judged)).reshape(n_queries, -1)
        names = long_id(numbers)
    else:
        pool = np.argsort(rng.random((n_queries, 4 * n_docs)), axis=1)[:, : n_docs + n_judged]
        names = short_id(pool)
    retrieved = names[:, :n_docs]
    # Half the judgments are of retrieved documents, half of documents the run missed.
    judged = np.concatenate(
        [retrieved[:, : n_judged // 2 * 2 : 2], names[:, n_docs : n_docs + n_judged // 2]], axis=1
    )
    grades = rng.integers(0, 4, size=judged.shape)
    scores = np.round(rng.uniform(10, 20, size=(n_queries, n_docs)), 2)
    order = np.argsort(-scores, axis=1, kind="stable")
    scores = np.take_along_axis(scores, order, axis=1)
    retrieved = np.take_along_axis(retrieved, order, axis=1)
    qrels, run = folder / f"qrels.{ids}.txt", folder / f"run.{ids}.trec"
    with qrels.open("w") as handle:
        for q, query in enumerate(queries):
            handle.write(
                "".join(f"{query} 0 {d} {g}\n" for d, g in zip(judged[q], grades[q], strict=True))
            )
    with run.open("w") as handle:
        for q, query in enumerate(queries):
            handle.write(
                "".join(
                    f"{query} Q0 {d} {r} {s:.2f} bench\n"
                    for r, (d, s) in enumerate(zip(retrieved[q], scores[q], strict=True), 1)
                )
            )
    return qrels, run


def commands(qrels: Path, run: Path, baseline: Path | None = None) -> dict[str, list[str]]:
    """The whole-process commands, by name (``baseline``: another ``orlbuild`` to time too)."""
    measures = [arg for m in MEASURES for arg in ("-m", ORLBUILD_MEASURES[m])]
    others = {"baseline": [str(baseline), "eval", str(qrels), str(run), *measures]}
    return {
        **(others if baseline else {}),
        "orlbuild eval": [str(BIN / "orlbuild"), "eval", str(qrels), str(run), *measures],
        "ir_measures CLI": [
            sys.executable,
            "-m",
            "ir_measures",
            str(qrels),
            str(run),
            " ".join(MEASURES),
        ],
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: Every process runs in a scratch folder: a baseline started as ``python -c ...`` would
#: otherwise import the packages of the folder the benchmark was started from.
WORKDIR = tempfile.gettempdir()


def run_once(command: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time and standard output of one process (failure raised)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=ENV, cwd=WORKDIR)
    return time.perf_counter() - start, _children_cpu() - cpu, done.stdout


def means(name: str, output: str) -> dict[str, float]:
    """The mean of each measure printed by one tool."""
    found = {}
    for line in output.splitlines():
        fields = line.replace("|", " ").replace("│", " ").split()
        if name == "ir_measures CLI" and len(fields) == 2 and fields[0] in MEASURES:
            found[fields[0]] = float(fields[1])
        ours = {v: k for k, v in ORLBUILD_MEASURES.items()}
        if name != "ir_measures CLI" and len(fields) >= 2 and fields[0] in ours:
            found[ours[fields[0]]] = float(fields[-1])
    return found


def compare(
    qrels: Path, run: Path, repeat: int, baseline: Path | None = None
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time of each tool over ``repeat`` interleaved rounds (after one)."""
    tools = commands(qrels, run, baseline)
    outputs = {name: run_once(command)[2] for name, command in tools.items()}
    values = {name: means(name, out) for name, out in outputs.items()}
    for measure in MEASURES:
        ours, theirs = values["orlbuild eval"].get(measure), values["ir_measures CLI"].get(measure)
        if "baseline" in values and values["baseline"].get(measure) != ours:
            raise SystemExit(f"{measure}: the baseline prints {values['baseline']}, not {ours}")
        if ours is None or theirs is None or abs(ours - theirs) > 5e-5:
            raise SystemExit(f"{measure}: orlbuild {ours} vs ir_measures {theirs}:\n{outputs}")
    walls: dict[str, list[float]] = {name: [] for name in tools}
    cpus: dict[str, list[float]] = {name: [] for name in tools}
    for _ in range(repeat):
        for name, command in tools.items():
            wall, cpu, _ = run_once(command)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in tools}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", choices=["long", "short", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--queries", type=int, default=6000)
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--baseline", type=Path, help="another orlbuild executable to time too")
    args = parser.parse_args()
    if args.baseline is not None and args.baseline.exists():
        args.baseline = args.baseline.resolve()  # the processes run in WORKDIR
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = (args.keep or Path(tmp)).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        for ids in ("long", "short") if args.ids == "both" else (args.ids,):
            qrels, run = write_files(folder, ids, n_queries=args.queries)
            lines = sum(1 for _ in run.open())
            print(f"{ids} ids: {lines:,}-line run, {qrels.stat().st_size / 1e6:.1f} MB qrels")
            times = compare(qrels, run, args.repeat, args.baseline)
            (ours, our_cpu), (theirs, their_cpu) = times["orlbuild eval"], times["ir_measures CLI"]
            print(
                f"  orlbuild eval {ours:.3f} s, ir_measures CLI {theirs:.3f} s "
                f"(medians of {args.repeat}): ratio {ours / theirs:.2f}\n"
                f"  cpu: orlbuild {our_cpu:.3f} s, ir_measures {their_cpu:.3f} s: "
                f"ratio {our_cpu / their_cpu:.2f}"
            )
            if "baseline" in times:
                before, before_cpu = times["baseline"]
                print(
                    f"  baseline {before:.3f} s (cpu {before_cpu:.3f} s): orlbuild eval / "
                    f"baseline {ours / before:.2f} (cpu {our_cpu / before_cpu:.2f})"
                )
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
