"""Saved nDCG scores under their full spelled-out names.

Issue 36 made the bare ``nDCG@k`` trec_eval's ``ndcg_cut.k`` (linear gain on
native grades, else on ``lc`` grades); before it, ``nDCG@k`` meant
``nDCG(grade=bi,gain=exp)@k`` and a name left out ``grade=bi`` and
``gain=exp`` as defaults. A saved evaluation recorded its measures as they
were named, so this migration rewrites every stored nDCG name to the full
form of its old meaning - ``nDCG@10`` -> ``nDCG(grade=bi,gain=exp)@10``,
``nDCG(grade=lc)@5`` -> ``nDCG(grade=lc,gain=exp)@5`` - in the evaluations'
``measures`` lists and ``means`` keys and in ``evaluation_values.measure``.
Since then, scores are saved under their full names (docs/measures.md,
"Baselines"). The downgrade writes the old short forms back.

Revision ID: 0016_ndcg_full_names
Revises: 0015_posterior_evidence
Create Date: 2026-12-03 14:00:00.000000
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_ndcg_full_names"
down_revision: str | None = "0015_posterior_evidence"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: The defaults of nDCG's parameters before issue 36.
OLD_DEFAULTS = {"grade": "bi", "gain": "exp"}
NDCG = re.compile(r"^\s*nDCG(?:\((?P<params>[^()]*)\))?(?P<cutoff>@\d+)?\s*$")


def _params(name: str) -> tuple[dict[str, str], str] | None:
    """An nDCG name's parameters and ``@k``, or ``None`` for another measure's name."""
    match = NDCG.match(name)
    if match is None:
        return None
    params: dict[str, str] = {}
    for part in filter(None, (match["params"] or "").split(",")):
        key, _, value = (s.strip() for s in part.partition("="))
        params[key] = value
    if set(params) - set(OLD_DEFAULTS):
        return None  # not a name the parser took: leave it as it is
    return params, match["cutoff"] or ""


def full_name(name: str) -> str:
    """The full spelled-out name of what ``name`` meant before issue 36."""
    parsed = _params(name)
    if parsed is None:
        return name
    params, cutoff = parsed
    grade = params.get("grade", OLD_DEFAULTS["grade"])
    gain = params.get("gain", OLD_DEFAULTS["gain"])
    return f"nDCG(grade={grade},gain={gain}){cutoff}"


def old_name(name: str) -> str:
    """The short name that meant ``name`` before issue 36 (defaults left out)."""
    parsed = _params(name)
    if parsed is None:
        return name
    params, cutoff = parsed
    kept = [
        f"{k}={params[k]}"
        for k in ("grade", "gain")
        if params.get(k, OLD_DEFAULTS[k]) != OLD_DEFAULTS[k]
    ]
    return "nDCG" + (f"({','.join(kept)})" if kept else "") + cutoff


def _load(value: object) -> object:
    return json.loads(value) if isinstance(value, str) else value


def _rewrite(rename: Callable[[str], str]) -> None:
    bind = op.get_bind()
    evaluations = sa.table(
        "evaluations", sa.column("id", sa.Integer), sa.column("measures", sa.JSON),
        sa.column("means", sa.JSON),
    )  # fmt: skip
    values = sa.table(
        "evaluation_values", sa.column("evaluation_id", sa.Integer),
        sa.column("measure", sa.String),
    )  # fmt: skip
    rows = bind.execute(sa.select(evaluations.c.id, evaluations.c.measures, evaluations.c.means))
    for evaluation_id, measures, means in rows.all():
        names = list(_load(measures) or [])
        renamed = {name: rename(name) for name in names}
        if all(old == new for old, new in renamed.items()):
            continue
        mean_values = dict(_load(means) or {})
        bind.execute(
            evaluations.update()
            .where(evaluations.c.id == evaluation_id)
            .values(
                measures=[renamed[n] for n in names],
                means={rename(k): v for k, v in mean_values.items()},
            )
        )
        for old, new in renamed.items():
            if old != new:
                bind.execute(
                    values.update()
                    .where(values.c.evaluation_id == evaluation_id)
                    .where(values.c.measure == old)
                    .values(measure=new)
                )


def upgrade() -> None:
    _rewrite(full_name)


def downgrade() -> None:
    _rewrite(old_name)
