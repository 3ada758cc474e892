"""How a run file is named when no ``--system`` is given: the one owner of run naming
(docs/input-formats.md, "System names of runs").

- :func:`run_stem`: a file's stem, compression and last extension removed
  (``--system-from stem``, and ``eval``'s fallback);
- :func:`eval_system_names`: ``orlbuild eval``'s names of several runs, its tag
  else its stem, repeats made distinct (docs/evaluating-files.md);
- the tag itself is read by :func:`orlbuild.ingest.run_tags.run_tag`
  (``--system-from tag``, every line checked), and ``ingest run`` checks and
  pairs the names with their files in
  :func:`orlbuild.services.run_ingests.run_system_names`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orlbuild.ingest.source import COMPRESSED_SUFFIXES, sniff_trec
from orlbuild.vocabulary import InputFormat

__all__ = ["eval_system_names", "run_stem"]


def run_stem(path: str | Path) -> str:
    """A run file's name without ``.gz``/``.bz2`` and its last extension.

    Parameters
    ----------
    path
        The run file.

    Returns
    -------
    str
        ``bm25`` for ``runs/bm25.trec.gz``.
    """
    name = Path(path)
    if name.suffix.lower() in COMPRESSED_SUFFIXES:
        name = name.with_suffix("")
    return name.stem


def eval_system_names(run_files: Sequence[Path]) -> list[str]:
    """Each run's name in ``orlbuild eval``: its TREC run tag, else its file stem; repeats
    made distinct.

    Parameters
    ----------
    run_files
        The run files, in the order given.

    Returns
    -------
    list of str
        One name per file: the tag (sixth field) of a TREC run's first line,
        else :func:`run_stem`; a name two runs share is replaced by their file
        stems, and any name still repeated gets ``#2``, ``#3``, ...
    """
    from orlbuild.orl_io.eval_files import first_line

    stems = [run_stem(p) for p in run_files]
    names = []
    for path, stem in zip(run_files, stems, strict=True):
        line = first_line(path)
        tagged = line is not None and sniff_trec(line) is InputFormat.trec
        names.append(line.split()[5] if line is not None and tagged else stem)
    names = [stem if names.count(n) > 1 else n for n, stem in zip(names, stems, strict=True)]
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique
