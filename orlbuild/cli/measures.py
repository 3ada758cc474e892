"""``orlbuild measures``: the measures, their parameters, RDQ aliases, weight presets, penalties."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Annotated, Any

import typer

from orlbuild.cli.options import FormatOption
from orlbuild.cli.render import emit
from orlbuild.vocabulary import OutputFormat

if TYPE_CHECKING:
    import pandas as pd

#: ``-l/--rel-level N`` of ``eval`` and ``score``: trec_eval's ``-l N``.
RelLevelOption = Annotated[
    float | None,
    typer.Option(
        "--rel-level",
        "-l",
        help="Relevant = grade >= N on every binary measure (trec_eval -l N): AP -> AP(rel=N).",
    ),
]


def measures_at_level(names: list[str], level: float | None) -> list[str]:
    """``names`` with ``rel=level`` on their binary measures (``level`` None: unchanged).

    Raises
    ------
    typer.BadParameter
        For a level that is not > 0.
    """
    if level is None:
        return names
    from scoring.measures import with_rel_level

    if not level > 0:
        raise typer.BadParameter(f"must be > 0, got {level:g}", param_hint="--rel-level")
    return with_rel_level(names, level)


def measures_command(fmt: FormatOption = OutputFormat.table) -> None:
    """List the measures, their parameters, the RDQ aliases, weight presets and penalties."""
    import pandas as pd

    from scoring import MEASURES
    from scoring.measures import ALIASES, RDQ
    from scoring.penalties import PENALTIES
    from scoring.weights import WEIGHT_PRESETS

    rows = []
    for alias, params in RDQ.ALIASES.items():
        preset = ",".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
        )
        rows.append({"measure": f"{alias}@k", "parameters": preset, "description": "RDQ alias"})
    for cls in MEASURES.values():
        defaults = ", ".join(
            f"{f.name}={f.default}" for f in fields(cls) if f.name not in ("cutoff", cls.AT_PARAM)
        )
        rows.append(
            {"measure": cls.pattern(), "parameters": defaults, "description": cls.DESCRIPTION}
        )
    for alias, (target, library) in ALIASES.items():
        pattern = MEASURES[target].pattern().replace(target, alias, 1)
        rows.append(
            {
                "measure": pattern,
                "parameters": "",
                "description": f"{library}'s name for {MEASURES[target].pattern()} (any case)",
            }
        )
    frame = pd.DataFrame(rows)
    payload = {
        "measures": rows,
        "weight_presets": {name: list(values) for name, values in WEIGHT_PRESETS.items()},
        "penalties": list(PENALTIES),
    }
    emit(fmt, frame=frame, payload=payload, title="Measures")
    if fmt is OutputFormat.table:
        presets = pd.DataFrame(
            {
                "preset": list(WEIGHT_PRESETS),
                "weights (last repeats)": [
                    ", ".join(f"{w:g}" for w in v) for v in WEIGHT_PRESETS.values()
                ],
            }
        )
        emit(fmt, frame=presets, title="Weight presets")
        emit(fmt, frame=penalty_table(PENALTIES), title="Penalties")


def penalty_table(penalties: dict[str, Any]) -> pd.DataFrame:
    """One row per registered penalty: name, its ``alpha``/``lam`` parameters, first doc line."""
    import pandas as pd

    return pd.DataFrame(
        {
            "penalty": list(penalties),
            "parameters": ["alpha, lam" if p.uses_alpha_lam else "" for p in penalties.values()],
            "description": [
                ((p.fn.__doc__ or "").replace("``", "").strip().splitlines() or [""])[0]
                for p in penalties.values()
            ],
        }
    )


def register(app: typer.Typer) -> None:
    """Add ``measures`` to the application."""
    app.command("measures")(measures_command)
