"""Hypothesis settings for the scoring properties.

No per-example deadline: the suite runs on shared two-core CI machines, where
a slow example says nothing about correctness and would only make the
property tests flaky.
"""

from hypothesis import settings

settings.register_profile("scoring", deadline=None)
settings.load_profile("scoring")
