"""The kill harness: real ``orlbuild`` processes killed (SIGKILL or SIGINT) at seeded random
times during ingest, build, ``score --save``, ``db upgrade`` and ``pipeline``; the store must
hold nothing half done, the command must have landed whole or left nothing, and its rerun
must succeed (docs/reliability.md, "Interrupted commands"). Both backends.

``ORLBUILD_KILL_ROUNDS`` sets the rounds per backend (default 6: each operation once, about
20 s per backend on two busy cores; ``ORLBUILD_KILL_ROUNDS=200`` for the long run);
``ORLBUILD_KILL_SEED`` the seed (default 39).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.reliability.kill_rounds import KillHarness

ROUNDS = int(os.environ.get("ORLBUILD_KILL_ROUNDS", "6"))
SEED = int(os.environ.get("ORLBUILD_KILL_SEED", "39"))


def test_killed_commands_leave_nothing_half_done(migrated_db_url: str, tmp_path: Path) -> None:
    start = time.monotonic()
    harness = KillHarness(migrated_db_url, tmp_path, SEED)
    results = [harness.round(n) for n in range(1, ROUNDS + 1)]
    failed = [r for r in results if r.problems]
    summary = ", ".join(f"{r.operation}/{r.signal}@{r.delay}s->{r.exit_code}" for r in results)
    print(f"\n{len(results)} kill rounds in {time.monotonic() - start:.1f} s: {summary}")
    assert not failed, "\n".join(f"round {r.number} ({r}): {r.problems}" for r in failed)
