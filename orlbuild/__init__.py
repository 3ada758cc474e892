"""orlbuild: ordered reference lists from annotator judgments, and RDQ scoring.

The :mod:`orlbuild` package holds the store, ingestion, ORL builders and the
command line; the pure scoring core lives in the sibling package :mod:`scoring`.
``__version__`` is the one place the version is written: ``pyproject.toml``
reads it from here (``[tool.setuptools.dynamic]``), so ``orlbuild --version``
needs no package-metadata lookup, which costs more than its whole start-up.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
