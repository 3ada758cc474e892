"""The main job end to end, driven by one TOML file: ingest -> build -> score -> compare -> report.

>>> from orlbuild.pipeline import load_config, run_pipeline  # doctest: +SKIP
>>> result = run_pipeline(load_config("sample_data/pipeline.toml"))  # doctest: +SKIP
>>> result.evaluation.means()  # doctest: +SKIP
>>> result.evaluation.verdicts()  # doctest: +SKIP

The schema is documented in :mod:`orlbuild.pipeline.config`;
``sample_data/pipeline.toml`` is a complete, commented example.
"""

from orlbuild.pipeline.config import load_config, parse_config
from orlbuild.pipeline.runner import PipelineResult, run_pipeline
from orlbuild.pipeline.specs import PipelineConfig
from orlbuild.services.build_evaluation import BuildEvaluation, evaluate_stored_build

__all__ = [
    "BuildEvaluation",
    "PipelineConfig",
    "PipelineResult",
    "evaluate_stored_build",
    "load_config",
    "parse_config",
    "run_pipeline",
]
