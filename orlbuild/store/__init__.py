"""The SQL store: models, engines, schema versions, bulk writes and the read API.

Every table is declared in :mod:`orlbuild.store.models` (one declarative base),
so Alembic and the model/migration parity test see the whole schema without
importing the modules that read and write it.
"""

from orlbuild.store.engine import Bind, create_store_engine, write_transaction
from orlbuild.store.read import (
    BatchInfo,
    batch_fingerprints,
    list_batches,
    list_collections,
    list_systems,
    load_graded,
    load_listwise,
    load_pairwise,
    load_run,
)
from orlbuild.store.schema import current_revision, downgrade, head_revision, upgrade
from orlbuild.store.session import open_store

__all__ = [
    "BatchInfo",
    "Bind",
    "batch_fingerprints",
    "create_store_engine",
    "current_revision",
    "downgrade",
    "head_revision",
    "list_batches",
    "list_collections",
    "list_systems",
    "load_graded",
    "load_listwise",
    "load_pairwise",
    "load_run",
    "open_store",
    "upgrade",
    "write_transaction",
]
