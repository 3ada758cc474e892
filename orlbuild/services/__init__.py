"""Use cases between the computing layers (builders, scoring) and the front ends (CLI, pipeline).

See the README's Development section for the layers and what each may import.
"""
