"""A self-contained HTML report of an evaluation: scores, significance, ORLs, power.

>>> from orlbuild.report import ReportData, write_report  # doctest: +SKIP
>>> data = ReportData(title="My eval", per_query=..., comparisons=...)  # doctest: +SKIP
>>> write_report(data, "report.html")  # doctest: +SKIP

:mod:`orlbuild.report.screenshot` renders a report with headless Chromium
(``python -m orlbuild.report.screenshot report.html -o report.png``).
"""

from orlbuild.report.data import ReportData
from orlbuild.report.document import render_report, write_report
from orlbuild.report.intervals import mean_interval, mean_intervals

__all__ = [
    "ReportData",
    "mean_interval",
    "mean_intervals",
    "render_report",
    "write_report",
]
