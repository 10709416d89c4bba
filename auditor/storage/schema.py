"""The whole schema: every module of ``auditor.storage`` that declares tables, imported by
name, so that ``METADATA`` (``Base.metadata``) lists every table.

Alembic (``migrations/env.py``: autogenerate and ``check``), the stored-time scan of
``auditor.storage.migrate`` and a project's deletion (``import_repository``) read the whole
schema through this module. A new models module is added here;
``tests/unit/test_storage_schema.py`` fails until it is.
"""

from __future__ import annotations

from types import ModuleType

from sqlalchemy import MetaData

from auditor.storage import (
    alert_models,
    dashboard_sessions,
    health_models,
    import_models,
    instance_secrets,
    kept_models,
    key_models,
    label_studio_models,
    models,
    snapshot_models,
)
from auditor.storage.db import Base

MODEL_MODULES: tuple[ModuleType, ...] = (
    models,
    import_models,
    snapshot_models,
    alert_models,
    key_models,
    health_models,
    dashboard_sessions,
    instance_secrets,
    label_studio_models,
    kept_models,
)

METADATA: MetaData = Base.metadata
