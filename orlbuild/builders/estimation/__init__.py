"""Estimation: item strengths and their uncertainty from one query's comparisons."""
