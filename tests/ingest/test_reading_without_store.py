"""Reading an input file needs no store: ``orlbuild eval`` on TSV files loads no SQLAlchemy.

:mod:`orlbuild.ingest.reading` reads and validates; only
:mod:`orlbuild.services.ingests` writes the store (docs/development.md, "Development").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from orlbuild.orl_io.eval_files import read_orl_file, read_run_file
orls = read_orl_file({orl!r})
run = read_run_file({run!r})
assert len(orls[0]) == 1 and len(run) == 2, (orls, run)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "alembic"))
print(" ".join(loaded[:5]) or "none")
"""


def test_reading_tsv_orl_and_run_files_loads_no_sqlalchemy(tmp_path: Path) -> None:
    orl = tmp_path / "orl.tsv"
    orl.write_text("query\titem\trank\nq1\td1\t1\nq1\td2\t2\n")
    run = tmp_path / "run.tsv"
    run.write_text("query\titem\trank\tscore\nq1\td1\t1\t2.0\nq1\td2\t2\t1.0\n")
    probe = PROBE.format(orl=str(orl), run=str(run))
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "none"
