"""Audit: quality checks of a build, auditor overrides, and leave-one-annotator-out."""
