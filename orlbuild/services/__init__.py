"""Use cases between the computing layers (builders, scoring) and the front ends (CLI, pipeline).

See docs/development.md, "Layers" for the layers and what each may import.
"""
