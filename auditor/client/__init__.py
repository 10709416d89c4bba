"""A Python client of the auditor HTTP API, for the pipelines that feed the service and the
notebooks that read it (docs/client.md).

    from auditor.client import Client

    with Client("http://127.0.0.1:8000", key) as client:
        client.post_labels(labels)                  # any number: batched, keyed, retried
        frame = client.history_frame("s", subjects=["model:judge-v1"])

``AsyncClient`` has the same methods for asyncio. Errors are ``auditor.errors`` classes with
the API's ``code`` and ``field``. Importing this package loads httpx and the standard library
only (no database, no NumPy, no pandas until a DataFrame is asked for).
"""

from __future__ import annotations

from auditor.client.aio import AsyncClient
from auditor.client.alert_records import AlertHistory, AlertState, Evaluation, Notification
from auditor.client.errors import (
    LabelsRejected,
    RemoteConflict,
    RemoteError,
    RemoteFailure,
    RemoteInvalid,
    RemoteNotFound,
)
from auditor.client.exchange import Counters
from auditor.client.records import (
    History,
    HistoryPoint,
    Import,
    KeyInfo,
    Label,
    PlannedItem,
    PostResult,
    Project,
    RaterRepeats,
    RepeatPlan,
    Revert,
    RevertMark,
    Snapshot,
)
from auditor.client.retry import NO_RETRY, RetryPolicy
from auditor.client.sync import Client

__all__ = [
    "NO_RETRY",
    "AlertHistory",
    "AlertState",
    "AsyncClient",
    "Client",
    "Counters",
    "Evaluation",
    "History",
    "HistoryPoint",
    "Import",
    "KeyInfo",
    "Label",
    "LabelsRejected",
    "Notification",
    "PlannedItem",
    "PostResult",
    "Project",
    "RaterRepeats",
    "RemoteConflict",
    "RemoteError",
    "RemoteFailure",
    "RemoteInvalid",
    "RemoteNotFound",
    "RepeatPlan",
    "RetryPolicy",
    "Revert",
    "RevertMark",
    "Snapshot",
]
