"""orlbuild: ordered reference lists from annotator judgments, and RDQ scoring.

The :mod:`orlbuild` package holds the store, ingestion, ORL builders and the
command line; the pure scoring core lives in the sibling package :mod:`scoring`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("orlbuild")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
