"""Open a report in headless Chromium: dump the rendered DOM or take a screenshot.

For humans checking how a report looks, and for the tests that load the page::

    python -m orlbuild.report.screenshot report.html -o report.png [--width 1280] [--height H]

The picture is of the whole page by default: the page is first loaded once
at the chosen width to measure its height (a copy of it with a one-line
script that writes ``document.documentElement.scrollHeight`` into the DOM),
then shot in a window that tall. ``--height H`` shoots only the top ``H``
pixels. Needs a Chromium binary (Debian: ``apt-get install chromium``). Chromium runs with
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

__all__ = [
    "CHROMIUM_NAMES",
    "LoadedPage",
    "find_chromium",
    "load_page",
    "page_height",
    "screenshot",
]

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

#: The attribute the measuring script writes the page height into.
_HEIGHT_ATTRIBUTE = "data-orlbuild-page-height"
_MEASURE = (
    "<script>addEventListener('load',()=>setTimeout(()=>document.documentElement"
    f".setAttribute('{_HEIGHT_ATTRIBUTE}',Math.ceil(Math.max(document.documentElement"
    ".scrollHeight,document.body?document.body.scrollHeight:0))),0));</script>"
)
_MEASURED = re.compile(_HEIGHT_ATTRIBUTE + r'="(\d+)"')

#: Tallest window a full-page screenshot is taken in (Chromium's texture limit is 16384).
MAX_HEIGHT = 16_384

#: Milliseconds of virtual time the page gets to run its scripts before it is measured or shot.
_SETTLE_MS = 2_000


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


def load_page(
    html_path: str | Path, *, timeout: float = 60.0, width: int | None = None
) -> LoadedPage:
    """Open ``html_path`` in headless Chromium and return its DOM and console messages.

    Parameters
    ----------
    html_path
        The HTML file to open (as a ``file://`` URL).
    timeout
        Seconds before giving up.
    width
        Window width in pixels (default: Chromium's).
    """
    url = Path(html_path).resolve().as_uri()
    window = [] if width is None else [f"--window-size={width},1000"]
    result = _run_chromium([*window, "--dump-dom", url], timeout=timeout)
    console = tuple(
        match.group(1) for line in result.stderr.splitlines() if (match := _CONSOLE.search(line))
    )
    return LoadedPage(dom=result.stdout, console=console)


def _measuring_copy(source: Path, text: str) -> Path:
    """Write ``text`` to a hidden file next to ``source`` (else in the temporary directory)."""
    for folder in (source.parent, None):
        try:
            descriptor, name = tempfile.mkstemp(suffix=".html", prefix=".measure-", dir=folder)
        except OSError:
            continue
        with open(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        return Path(name)
    raise OrlbuildError(f"cannot write a copy of {source} to measure it")


def page_height(html_path: str | Path, *, width: int = 1280, timeout: float = 60.0) -> int:
    """The height in pixels of the page laid out ``width`` pixels wide.

    A copy of the page, next to it (so that relative links still resolve) or
    else in a temporary directory, gets a script that writes the height into
    the DOM once the page has loaded; the copy is removed afterwards.

    Raises
    ------
    OrlbuildError
        Chromium is missing or failed, or the page did not report its height.
    """
    source = Path(html_path).resolve()
    text = source.read_text(encoding="utf-8", errors="replace")
    marker = text.lower().rfind("</body>")
    measured = text + _MEASURE if marker < 0 else text[:marker] + _MEASURE + text[marker:]
    copy = _measuring_copy(source, measured)
    try:
        result = _run_chromium(
            [
                f"--window-size={width},600",
                f"--virtual-time-budget={_SETTLE_MS}",
                "--dump-dom",
                copy.as_uri(),
            ],
            timeout=timeout,
        )
    finally:
        copy.unlink(missing_ok=True)
    found = _MEASURED.search(result.stdout)
    if found is None:
        raise OrlbuildError(f"Chromium did not report the height of {source}")
    return max(1, int(found.group(1)))


def screenshot(
    html_path: str | Path,
    png_path: str | Path,
    *,
    width: int = 1280,
    height: int | None = None,
    timeout: float = 60.0,
) -> Path:
    """Render the page ``width`` pixels wide and save it as a PNG: the whole page by default.

    Parameters
    ----------
    html_path, png_path
        The report and the picture to write.
    width
        Window width in pixels.
    height
        Window height in pixels; ``None`` (default): the page's own height
        (:func:`page_height`), at most :data:`MAX_HEIGHT`.
    timeout
        Seconds each Chromium run may take.

    Returns
    -------
    pathlib.Path
        ``png_path``.
    """
    target = Path(png_path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    if height is None:
        height = min(page_height(html_path, width=width, timeout=timeout), MAX_HEIGHT)
    url = Path(html_path).resolve().as_uri()
    _run_chromium(
        [
            f"--window-size={width},{height}",
            f"--virtual-time-budget={_SETTLE_MS}",
            f"--screenshot={target}",
            url,
        ],
        timeout=timeout,
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
    parser.add_argument(
        "--height", type=int, default=None, help="pixels from the top (default: the whole page)"
    )
    args = parser.parse_args(argv)
    output = args.output or args.report.with_suffix(".png")
    print(screenshot(args.report, output, width=args.width, height=args.height))


if __name__ == "__main__":
    main()
