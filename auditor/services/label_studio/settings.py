"""A project's Label Studio settings: one configuration for the webhook, the import and the sync.

Why a record of its own and not a project setting (``projects`` columns, the PATCH settings
schema): these are integration settings, not a statistic's. They include a secret (the API
token, never shown), they belong to one tool, and they change what labels *are* (which task
field is the item, which control is the label), not how labels are measured. So they are set
by the operator on the command line (``auditor label-studio settings``) and shown without the
token; a change that would re-map stored labels is followed by a sync, which re-maps them.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime

from auditor.connectors.label_studio import LabelStudioApi
from auditor.errors import Invalid
from auditor.ingestion.label_studio import PREDICTION_MODES, LabelStudioOptions
from auditor.storage.label_studio_settings_repository import SettingsRecord
from auditor.storage.unit_of_work import UnitOfWork

ITEM_FIELD = re.compile(r"^data\.[^\s.][^\s]{0,194}$")
UNSET = object()  # a setting not given (None clears one)


@dataclass(frozen=True)
class SettingsView:
    """The settings as shown: the token only as whether one is set."""

    project: str
    item_field: str | None
    from_name: str | None
    predictions: str
    url: str | None
    ls_project: int | None
    token_set: bool
    sync_minutes: int | None
    last_sync_at: datetime | None
    last_sync_status: str | None


def options_of(record: SettingsRecord | None) -> LabelStudioOptions:
    """How the project maps annotations (the defaults when nothing is set)."""
    if record is None:
        return LabelStudioOptions()
    return LabelStudioOptions(record.item_field, record.from_name, record.predictions)


def api_of(record: SettingsRecord | None) -> LabelStudioApi | None:
    """A client of the project's Label Studio, or None when URL, token or project is unset."""
    if record is None or not record.url or not record.token or record.ls_project is None:
        return None
    return LabelStudioApi(record.url, record.token)


def project_options(uow: UnitOfWork, slug: str) -> LabelStudioOptions:
    with uow:
        project = uow.require_project(slug)
        return options_of(uow.label_studio_settings.get(project.id))


def _view(slug: str, record: SettingsRecord) -> SettingsView:
    return SettingsView(
        slug,
        record.item_field,
        record.from_name,
        record.predictions,
        record.url,
        record.ls_project,
        bool(record.token),
        record.sync_minutes,
        record.last_sync_at,
        record.last_sync_status,
    )


def show_settings(uow: UnitOfWork, slug: str) -> SettingsView:
    with uow:
        project = uow.require_project(slug)
        return _view(slug, uow.label_studio_settings.get(project.id) or SettingsRecord())


def _checked(changes: dict[str, object]) -> dict[str, object]:
    item_field = changes.get("item_field")
    if isinstance(item_field, str) and not ITEM_FIELD.match(item_field):
        raise Invalid(
            f"item field {item_field!r}: write data.<key>, a key of the task's data",
            field="item_field",
        )
    predictions = changes.get("predictions")
    if "predictions" in changes and predictions not in PREDICTION_MODES:
        raise Invalid(
            f"predictions must be one of {', '.join(PREDICTION_MODES)}", field="predictions"
        )
    url = changes.get("url")
    if isinstance(url, str) and not re.match(r"^https?://[^\s/]+", url):
        raise Invalid(f"url {url!r}: an http:// or https:// address", field="url")
    for name in ("ls_project", "sync_minutes"):
        value = changes.get(name)
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise Invalid(f"{name} must be a positive integer", field=name)
    for name in ("from_name", "token"):
        value = changes.get(name)
        if isinstance(value, str) and not value.strip():
            raise Invalid(f"{name} is empty", field=name)
    return changes


def update_settings(uow: UnitOfWork, slug: str, **changes: object) -> SettingsView:
    """Set the given settings (None clears one); the others keep their values."""
    given = _checked({name: value for name, value in changes.items() if value is not UNSET})
    unknown = set(given) - {f.name for f in dataclasses.fields(SettingsRecord)}
    if unknown:
        raise Invalid(f"no Label Studio setting {sorted(unknown)[0]!r}")
    with uow:
        project = uow.require_project(slug, for_update=True)
        record = uow.label_studio_settings.get(project.id) or SettingsRecord()
        record = dataclasses.replace(record, **given)  # type: ignore[arg-type]
        uow.label_studio_settings.put(project.id, record)
        uow.commit()
    return _view(slug, record)


def import_options(uow: UnitOfWork, slug: str, given: LabelStudioOptions) -> LabelStudioOptions:
    """The options an import of a Label Studio export into ``slug`` reads with: the project's
    settings. An ``--item-field`` or ``--from-name`` that differs from them is refused (the
    webhook and the sync read with the settings; an import that read otherwise would store
    the same annotation as another item or label)."""
    stored = project_options(uow, slug)
    for name, option in (("item_field", "--item-field"), ("from_name", "--from-name")):
        wanted = getattr(given, name)
        have = getattr(stored, name)
        if wanted is not None and wanted != have:
            shown = "unset" if have is None else repr(have)
            raise Invalid(
                f"{option} {wanted!r}: project {slug!r} reads Label Studio with {name} {shown}; "
                f"change it with `auditor label-studio settings {slug} {option} {wanted}` "
                "(the webhook and the sync read with the same settings)",
                field=name,
            )
    return stored
