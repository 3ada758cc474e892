"""The pipeline config texts the tests start from (docs/pipeline.md, "Pipeline configuration")."""

from __future__ import annotations

from collections.abc import Sequence


def pipeline_toml(
    *,
    measure: str = "RDQm2-a1@10",
    kind: str = "pairwise",
    judgments: str = "pairs.tsv",
    runs: Sequence[tuple[str, str]] = (("a.trec", "a"),),
    build: str = "main",
) -> str:
    """A config: one judgments file, the runs ``(path, system)``, one build of the
    judgments, scored against that build; a blank line between sections."""
    inputs = [f'[[inputs]]\nkind = "{kind}"\npath = "{judgments}"\n']
    inputs += [
        f'[[inputs]]\nkind = "run"\npath = "{path}"\nsystem = "{system}"\n' for path, system in runs
    ]
    return "\n".join(
        [
            f'\nmeasures = ["{measure}"]\n',
            *inputs,
            f'[[builds]]\nname = "{build}"\nsource = "{kind}"\n',
            f'[scoring]\nbuild = "{build}"\n',
        ]
    )


#: The smallest config the pipeline accepts: pairwise judgments, one run, one build.
MINIMAL = pipeline_toml()
