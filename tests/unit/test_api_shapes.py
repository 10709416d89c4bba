"""One shape per fact (issue 23, item 5): each API response model against the storage or service
dataclass it renders, and each client record against the API model it reads.

A field added on one side and not the other fails here, naming the pair, instead of vanishing
from a response (or a client) unnoticed. The differences that are meant are listed with their
reason: a field renamed on the way out, one the API computes, one it keeps to itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from auditor.alerting.rules import Condition, Rule
from auditor.api import schemas, schemas_alerts
from auditor.api.routes import imports as import_routes
from auditor.api.routes import key as key_routes
from auditor.api.routes import repeats as repeat_routes
from auditor.client import alert_records as client_alerts
from auditor.client import records as client
from auditor.domain import ProjectSettings
from auditor.services.alerts.channels import ChannelView
from auditor.services.alerts.reads import StateView
from auditor.services.alerts.silences import SilenceView
from auditor.services.ingest.labels import IngestResult
from auditor.services.projects.projects import ProjectView
from auditor.services.queries.reverts import RevertMark
from auditor.storage import read_records
from auditor.storage.alert_records import EvaluationRecord, OutboxRecord


@dataclass(frozen=True)
class Pair:
    """``model`` renders (or reads) ``source``: their fields agree but for these."""

    model: type[BaseModel]
    source: type[Any]
    renamed: dict[str, str] = field(default_factory=dict)  # source field -> model field
    model_only: frozenset[str] = frozenset()  # computed or added on the way out
    source_only: frozenset[str] = frozenset()  # kept from the response on purpose
    nested: dict[str, type[Any]] = field(default_factory=dict)  # flattened into the model

    def expected(self) -> set[str]:
        names: set[str] = set()
        for name in _fields(self.source):
            if name in self.nested:
                names |= {self.renamed.get(n, n) for n in _fields(self.nested[name])}
            elif name not in self.source_only:
                names.add(self.renamed.get(name, name))
        return names | set(self.model_only)


def _fields(kind: type[Any]) -> list[str]:
    if dataclasses.is_dataclass(kind):
        return [f.name for f in dataclasses.fields(kind)]
    return list(kind.model_fields)  # a pydantic model as the source (the client's side)


# The API's response models and the dataclasses they are built from (``auditor.api.routes``).
RENDERED = [
    Pair(schemas.IngestOut, IngestResult),
    Pair(schemas.SettingsOut, ProjectSettings),
    Pair(schemas.ProjectOut, ProjectView),
    Pair(schemas.RaterOut, read_records.RaterLabelsRow),
    Pair(schemas.ItemOut, read_records.ItemRow),
    Pair(schemas.SessionOut, read_records.SessionRow),
    # the label count at the snapshot is the recompute's bookkeeping (dirty tracking)
    Pair(
        schemas.SnapshotSummary,
        read_records.SnapshotSummaryRow,
        source_only=frozenset({"project_label_count"}),
    ),
    Pair(schemas.HistoryPointOut, read_records.HistoryPointRow),
    # ``chart_at`` places the mark on the dashboard's charts only
    Pair(
        schemas.RevertMarkOut,
        RevertMark,
        renamed={"at": "reverted_at"},
        source_only=frozenset({"chart_at"}),
    ),
    # the first kinds' settings stay at the top level for clients that read them there
    Pair(
        schemas_alerts.ChannelOut,
        ChannelView,
        renamed={"settings": "config"},
        model_only=frozenset({"url", "email_host", "email_port", "email_from", "email_to"}),
    ),
    Pair(schemas_alerts.SilenceOut, SilenceView),
    Pair(schemas_alerts.StateOut, StateView),
    # the project is the path's; ``change`` is computed from the transition
    Pair(
        schemas_alerts.EvaluationOut,
        EvaluationRecord,
        renamed={"subject_key": "subject"},
        model_only=frozenset({"change"}),
        source_only=frozenset({"project_id"}),
    ),
    # the body, the channel's id and the claim are the sender's business
    Pair(
        schemas_alerts.NotificationOut,
        OutboxRecord,
        renamed={"subject_key": "subject"},
        source_only=frozenset({"project_id", "channel_id", "body", "claimed_by", "claimed_until"}),
    ),
    # durations in seconds; the condition's fields flattened; the project is the path's
    Pair(
        schemas_alerts.RuleOut,
        Rule,
        renamed={
            "for_": "for_seconds",
            "keep_firing_for": "keep_firing_for_seconds",
            "repeat_interval": "repeat_interval_seconds",
            "kind": "condition",
            "lookback": "lookback_seconds",
        },
        source_only=frozenset({"project"}),
        nested={"condition": Condition},
    ),
]

# The client's records (``auditor.client``, which may not import the server) and the API
# models they are read from.
READ_BY_CLIENT = [
    Pair(schemas.LabelBody, client.Label),
    Pair(key_routes.KeyInfo, client.KeyInfo),
    Pair(schemas.ProjectOut, client.Project),
    Pair(schemas.HistoryPointOut, client.HistoryPoint),
    Pair(schemas.RevertMarkOut, client.RevertMark),
    # the page's bookkeeping: the client follows next_after itself and returns every point
    Pair(schemas.HistoryOut, client.History, model_only=frozenset({"max_points", "next_after"})),
    Pair(repeat_routes.PlannedItem, client.PlannedItem),
    # the client remembers the request id it sent (the Idempotency-Key of the plan)
    Pair(repeat_routes.RepeatPlanOut, client.RepeatPlan, source_only=frozenset({"request_id"})),
    Pair(repeat_routes.RaterRepeatsOut, client.RaterRepeats),
    Pair(import_routes.ImportOut, client.Import),
    Pair(import_routes.RevertOut, client.Revert),
    Pair(schemas_alerts.StateOut, client_alerts.AlertState),
    Pair(schemas_alerts.EvaluationOut, client_alerts.Evaluation),
    # ``truncated`` is ``more > 0``, which the client keeps
    Pair(
        schemas_alerts.EvaluationList,
        client_alerts.AlertHistory,
        model_only=frozenset({"truncated"}),
    ),
    Pair(schemas_alerts.NotificationOut, client_alerts.Notification),
]


def _name(pair: Pair) -> str:
    return f"{pair.model.__name__}<-{pair.source.__module__}.{pair.source.__name__}"


@pytest.mark.parametrize("pair", RENDERED + READ_BY_CLIENT, ids=_name)
def test_the_model_and_its_dataclass_have_the_same_fields(pair: Pair) -> None:
    model = set(pair.model.model_fields)
    expected = pair.expected()
    assert not expected - model, f"{_name(pair)}: missing from the model: {expected - model}"
    assert not model - expected, f"{_name(pair)}: missing from the dataclass: {model - expected}"


def test_a_field_added_on_one_side_fails() -> None:
    # The check can fail: a dataclass with one more field than its model.
    @dataclass(frozen=True)
    class Grown(read_records.ItemRow):
        priority: int = 0

    pair = Pair(schemas.ItemOut, Grown)
    assert pair.expected() - set(pair.model.model_fields) == {"priority"}


def test_every_client_record_is_tied_to_an_api_model() -> None:
    """A new record in the client's modules must join READ_BY_CLIENT (or the list of those
    that are not one response's mirror, with its reason)."""
    not_mirrors = {
        client.PostResult,  # sums of many batches' IngestOut
        client.Snapshot,  # the snapshot document is free-form JSON (result, meta)
    }
    tied = {pair.source for pair in READ_BY_CLIENT}
    for module in (client, client_alerts):
        for value in vars(module).values():
            if dataclasses.is_dataclass(value) and value.__module__ == module.__name__:
                assert value in tied | not_mirrors, f"{value.__name__} is tied to no API model"
