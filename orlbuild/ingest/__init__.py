"""Ingestion of listwise, pairwise and graded judgments and of system runs (FORMATS.md)."""

from orlbuild.ingest.kinds import DuplicatePolicy
from orlbuild.ingest.pipeline import (
    IngestResult,
    ParsedInput,
    ingest_file,
    ingest_graded_file,
    ingest_listwise_file,
    ingest_pairwise_file,
    ingest_run_file,
    read_input,
)
from orlbuild.ingest.source import InputFormat

__all__ = [
    "DuplicatePolicy",
    "IngestResult",
    "InputFormat",
    "ParsedInput",
    "ingest_file",
    "ingest_graded_file",
    "ingest_listwise_file",
    "ingest_pairwise_file",
    "ingest_run_file",
    "read_input",
]
