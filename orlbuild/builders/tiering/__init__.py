"""Tiering: from a query's scores and their uncertainty to tiers, every tie decision recorded."""
