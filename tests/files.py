"""Input files written for a test: the ``write_file`` fixture's type."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

#: ``write_file(name, content)``: text (UTF-8) or raw bytes written to the test's folder.
Write = Callable[[str, str | bytes], Path]
