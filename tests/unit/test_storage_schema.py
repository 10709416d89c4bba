"""auditor.storage.schema names every module that declares tables, so Base.metadata is whole
wherever it is read (migrations, the stored-time scan, project deletion)."""

from __future__ import annotations

import importlib
import pkgutil

import auditor.storage
from auditor.storage.db import Base
from auditor.storage.schema import METADATA, MODEL_MODULES


def test_every_module_declaring_tables_is_in_the_schema():
    declaring = set()
    for info in pkgutil.iter_modules(auditor.storage.__path__):
        module = importlib.import_module(f"auditor.storage.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Base)
                and value is not Base
                and value.__module__ == module.__name__
            ):
                declaring.add(module.__name__)
    assert declaring == {m.__name__ for m in MODEL_MODULES}


def test_the_schema_lists_the_core_tables():
    assert {"projects", "labels", "snapshots", "alert_rules"} <= set(METADATA.tables)
