"""Fixtures of the report tests."""

from __future__ import annotations

import pytest

from orlbuild.report import ReportData
from tests.report.synthetic import synthetic_report


@pytest.fixture(scope="session")
def report_data() -> ReportData:
    """A synthetic report with comparisons, ORLs and power curves."""
    return synthetic_report()
