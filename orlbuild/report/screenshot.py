"""Open a report in headless Chromium: dump the rendered DOM or take a screenshot.

For humans checking how a report looks, and for the tests that load the page::

    python -m orlbuild.report.screenshot report.html -o report.png [--width 1280 --height 3000]

Needs a Chromium binary (Debian: ``apt-get install chromium``). Chromium runs with
a throw-away profile and with background networking, updates and sync off.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orlbuild.errors import OrlbuildError

__all__ = ["CHROMIUM_NAMES", "LoadedPage", "find_chromium", "load_page", "screenshot"]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--enable-logging=stderr",  # the page's console messages, to spot errors
    "--v=0",
)
_CONSOLE = re.compile(r":CONSOLE[:(\d)]*\]\s*(.*)$")


@dataclass(frozen=True)
class LoadedPage:
    """A page as headless Chromium saw it.

    Attributes
    ----------
    dom
        The serialised DOM after loading (``--dump-dom``).
    console
        Messages the page wrote to the JavaScript console (errors included).
    """

    dom: str
    console: tuple[str, ...]


def find_chromium() -> str | None:
    """Path of a Chromium (or Chrome) binary on ``PATH``, or ``None``."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run_chromium(args: Sequence[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    binary = find_chromium()
    if binary is None:
        raise OrlbuildError(
            "Chromium not found on PATH; install it (Debian: apt-get install chromium)"
        )
    with tempfile.TemporaryDirectory(prefix="orlbuild-chromium-") as profile:
        command = [binary, *_FLAGS, f"--user-data-dir={profile}", *args]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise OrlbuildError(f"Chromium did not finish within {timeout:g} s") from None
    if result.returncode != 0:
        tail = " ".join(result.stderr.split()[-40:])
        raise OrlbuildError(f"Chromium failed with exit code {result.returncode}: {tail}")
    return result


def load_page(html_path: str | Path, *, timeout: float = 60.0) -> LoadedPage:
    """Open ``html_path`` in headless Chromium and return its DOM and console messages.

    Parameters
    ----------
    html_path
        The HTML file to open (as a ``file://`` URL).
    timeout
        Seconds before giving up.
    """
    url = Path(html_path).resolve().as_uri()
    result = _run_chromium(["--dump-dom", url], timeout=timeout)
    console = tuple(
        match.group(1) for line in result.stderr.splitlines() if (match := _CONSOLE.search(line))
    )
    return LoadedPage(dom=result.stdout, console=console)


def screenshot(
    html_path: str | Path,
    png_path: str | Path,
    *,
    width: int = 1280,
    height: int = 2400,
    timeout: float = 60.0,
) -> Path:
    """Render the page in a ``width`` x ``height`` window and save it as a PNG.

    Returns
    -------
    pathlib.Path
        ``png_path``.
    """
    target = Path(png_path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    url = Path(html_path).resolve().as_uri()
    _run_chromium(
        [f"--window-size={width},{height}", f"--screenshot={target}", url], timeout=timeout
    )
    if not target.is_file():
        raise OrlbuildError(f"Chromium wrote no screenshot to {target}")
    return target


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m orlbuild.report.screenshot REPORT.html [-o PNG] [--width W] [--height H]``."""
    parser = argparse.ArgumentParser(description="Screenshot an orlbuild HTML report.")
    parser.add_argument("report", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=None)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2400)
    args = parser.parse_args(argv)
    output = args.output or args.report.with_suffix(".png")
    print(screenshot(args.report, output, width=args.width, height=args.height))


if __name__ == "__main__":
    main()
