"""Adapters that expose :mod:`scoring` measures inside other evaluation tools.

Nothing here is imported by ``import scoring``; each adapter imports its tool
only when it is itself imported (docs/integrations.md, "RDQ in ir_measures and PyTerrier").
"""
