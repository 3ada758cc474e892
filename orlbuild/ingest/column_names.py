"""``--columns FILE=OURS,...`` (TOML ``columns = {FILE = "OURS"}``): read a file whose column
names differ from ours without editing it (docs/input-formats.md, "Other column names")."""

from __future__ import annotations

from collections.abc import Mapping

from orlbuild.errors import ConfigError
from orlbuild.ingest.kinds import KINDS
from orlbuild.vocabulary import InputKind

__all__ = ["column_words", "parse_column_map"]


#: Columns read beside a kind's shapes: a tabular run's ``tag``, which ``--system-from tag``
#: names its system by (:mod:`orlbuild.ingest.run_tags`).
_ALSO_READ = {InputKind.run: frozenset({"tag"})}


def _names(kind: str) -> set[str]:
    """Every column name (canonical or alias) of every shape of ``kind``, and those it
    is also read for (:data:`_ALSO_READ`)."""
    shapes = set().union(*(layout.names() for layout in KINDS[InputKind(kind)].layouts))
    return shapes | _ALSO_READ.get(InputKind(kind), frozenset())


def parse_column_map(kind: str, given: str | Mapping[str, str] | None) -> dict[str, str]:
    """The file-name -> our-name map of ``--columns preferred=winner,other=loser``.

    Names are compared as headers are: stripped and lower-cased.

    Parameters
    ----------
    kind
        The input kind, whose column names the targets must be.
    given
        ``"a=b,c=d"`` (the command line), a mapping (TOML), or ``None``.

    Returns
    -------
    dict
        Empty when nothing is given.

    Raises
    ------
    ConfigError
        A pair without ``=``, an empty name, a file column named twice, two
        file columns mapped onto one of ours, or a target that is no column of
        ``kind``.

    Examples
    --------
    >>> parse_column_map("pairwise", "Preferred=winner, other=loser")
    {'preferred': 'winner', 'other': 'loser'}
    """
    if not given:
        return {}
    pairs: list[tuple[str, str]] = []
    if isinstance(given, str):
        for part in given.split(","):
            source, equals, target = part.partition("=")
            if not equals:
                raise ConfigError(
                    f"--columns {given!r}: {part.strip()!r} is not FILE_COLUMN=OUR_COLUMN "
                    "(e.g. --columns preferred=winner,other=loser)"
                )
            pairs.append((source, target))
    else:
        pairs = [(str(source), str(target)) for source, target in given.items()]
    known = _names(kind)
    mapping: dict[str, str] = {}
    for source, target in pairs:
        source, target = source.strip().lower(), target.strip().lower()
        if not source or not target:
            raise ConfigError(f"--columns: an empty column name in {given!r}")
        if source in mapping:
            raise ConfigError(f"--columns names the file column {source!r} twice")
        if target not in known:
            raise ConfigError(
                f"--columns: {target!r} is not a column of {kind} data; the columns are "
                + ", ".join(sorted(known))
            )
        if target in mapping.values():
            raise ConfigError(f"--columns maps two file columns onto {target!r}")
        mapping[source] = target
    return mapping


def column_words(mapping: Mapping[str, str]) -> str:
    """The map in the words of the command line: ``preferred=winner,other=loser``."""
    return ",".join(f"{source}={target}" for source, target in mapping.items())
