"""Reads of a build whose batches were deleted: one line saying so, or a refusal.

A build keeps the hash, file name, kind and size of every batch it read; a
``batches delete --force`` of one of them clears the build's reference
(docs/reliability.md, "Deleted batches"). The commands that read a build's
judgments again (``quality``, ``plan``, ``orl show --rank-intervals``) then see
fewer judgments, or none, and the commands that show what was stored from them
(``audit BUILD``'s annotator reliabilities, ``report``) show figures whose
judgments are gone. :func:`deleted_batches_notice` is the one check every such
command calls: ``None`` when every batch is there, a one-line warning when some
are gone and the command can still work, and a :class:`StoreError` naming the
batches and what still works when the command has nothing left to compute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orlbuild.errors import StoreError
from orlbuild.store.builds import BuildRecord, get_build

if TYPE_CHECKING:
    from orlbuild.store.engine import Bind
    from orlbuild.store.read import BatchInfo

__all__ = ["deleted_batches_notice"]


def _named(batches: list[BatchInfo]) -> str:
    """``p.tsv (pairwise, 3000 rows, sha256 1a2b3c4d)`` for each batch, comma-separated."""
    return ", ".join(
        f"{b.file_name} ({b.kind}, {b.row_count} rows, sha256 {b.sha256[:8]})" for b in batches
    )


def deleted_batches_notice(
    bind: Bind,
    build: str | int | BuildRecord,
    use: str,
    *,
    needs_judgments: bool = True,
) -> str | None:
    """Say which batches of ``build`` were deleted, or refuse when nothing can be computed.

    Parameters
    ----------
    bind
        The store.
    build
        The build (id, name, ``NAME@N``) or its record.
    use
        What the command computes, for the message: ``quality``, ``the plan``, ...
    needs_judgments
        Whether ``use`` is computed from the judgments (``quality``, ``plan``, rank
        intervals) rather than from what was stored with the build (annotator
        reliabilities, the ORLs a report scores against).

    Returns
    -------
    str or None
        ``None`` when every batch the build read is stored; otherwise one line
        (``warning: build 3 read 2 batches; deleted since: ...; USE ...``).

    Raises
    ------
    StoreError
        ``needs_judgments`` and every batch the build read was deleted: one line
        naming them and what can still be shown.
    """
    record = build if isinstance(build, BuildRecord) else get_build(bind, build)
    gone = [b for b in record.batches if b.id < 0]
    if not gone:
        return None
    kept = [b for b in record.batches if b.id >= 0]
    head = (
        f"build {record.id} read {len(record.batches)} batch"
        f"{'es' if len(record.batches) != 1 else ''}; deleted since "
        f"(`batches delete --force`): {_named(gone)}"
    )
    still = f"`orl show {record.id}` and `orl export {record.id}` still show its stored ORLs"
    if not needs_judgments:
        return f"warning: {head}; {use} shows what was stored with the build"
    if not kept:
        raise StoreError(f"{head}; {use} cannot be computed without its judgments; {still}")
    left = ", ".join(str(b.id) for b in kept)
    return f"warning: {head}; {use} uses only the judgments of batch {left}"
