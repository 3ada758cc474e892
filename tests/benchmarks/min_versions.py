"""Run the test suite against the lowest versions ``pyproject.toml`` declares.

The lower bounds in ``pyproject.toml`` are promises: ``pandas>=2.0`` says that
orlbuild works with pandas 2.0. This script checks them. It builds a fresh
virtual environment in a temporary folder, pins every direct dependency with
a ``>=`` bound (runtime dependencies and the ``test`` extra) to exactly that
lower bound through a pip constraints file, installs the project the way the
README's test command does (``pip install ".[test]"``), and runs the suite.
Transitive dependencies resolve to whatever pip picks with those pins.

Not part of the default run (it installs a whole environment and takes a few
minutes)::

    python tests/benchmarks/min_versions.py            # exit status of pytest
    python tests/benchmarks/min_versions.py -- -x -q   # arguments after -- go to pytest

It prints the pins, the versions actually installed and pytest's summary.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def lower_bound_pins(extras: tuple[str, ...] = ("test",)) -> list[str]:
    """``name==lower`` for each direct dependency with a ``>=`` bound that applies here."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    texts = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    pins: dict[str, str] = {}
    for text in texts:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        lows = [s.version for s in requirement.specifier if s.operator == ">="]
        if lows:
            pins[requirement.name] = f"{requirement.name}=={lows[0]}"
    return sorted(pins.values())


def _run(command: list[str], **kwargs: object) -> int:
    print("$", " ".join(command), flush=True)
    return subprocess.run(command, check=False, **kwargs).returncode  # type: ignore[call-overload]


def main(argv: list[str] | None = None) -> int:
    """Build the lowest-versions environment and run pytest in it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pytest_args", nargs="*", help="arguments passed on to pytest")
    args = parser.parse_args(argv)
    pins = lower_bound_pins()
    print("Pinned to the declared lower bounds:")
    for pin in pins:
        print(f"  {pin}")
    with tempfile.TemporaryDirectory(prefix="orlbuild-minversions-") as folder:
        env_dir = Path(folder) / "venv"
        venv.create(env_dir, with_pip=True)
        python = str(env_dir / "bin" / "python")
        constraints = Path(folder) / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        _run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        status = _run(
            [python, "-m", "pip", "install", "--quiet", f"{ROOT}[test]", "-c", str(constraints)]
        )
        if status != 0:
            print("installing the lowest declared versions failed", file=sys.stderr)
            return status
        _run([python, "-m", "pip", "list", "--format=freeze"])
        environment = {"PATH": f"{env_dir / 'bin'}:/usr/bin:/bin"}
        for name in ("ORLBUILD_TEST_PG_URL", "HOME", "TMPDIR", "LANG"):
            value = os.environ.get(name)
            if value is not None:
                environment[name] = value
        return _run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", *args.pytest_args],
            cwd=ROOT,
            env=environment,
        )


if __name__ == "__main__":
    sys.exit(main())
