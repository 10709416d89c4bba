"""Projects and their categories: creation rules, settings, and the vocabulary rules."""

from __future__ import annotations

import pytest

from auditor.domain import CollapsePolicy, IntervalMethod, ProjectSettings
from auditor.errors import Conflict, Invalid, NotFound
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import (
    add_categories,
    create_project,
    list_projects,
    project_settings,
    remove_category,
    rename_category,
    show_project,
)


def test_create_list_show_with_default_settings(uow) -> None:
    created = create_project(uow, "radiology", ["normal", "benign", "malignant"], name="Chest")
    assert created.categories == ("normal", "benign", "malignant")
    assert created.settings == ProjectSettings()
    create_project(uow, "alpha", ["a", "b"])
    assert [p.slug for p in list_projects(uow)] == ["alpha", "radiology"]
    shown = show_project(uow, "radiology")
    assert shown.name == "Chest"
    assert shown.counts == {"labels": 0, "items": 0, "raters": 0, "sessions": 0}
    assert shown.created_at.tzinfo is not None


def test_settings_are_stored_in_typed_columns(uow) -> None:
    create_project(
        uow,
        "p",
        ["a", "b"],
        collapse="mode",
        interval_method="bootstrap",
        interval_level=0.9,
        bootstrap_resamples=200,
        windows_days=(30, 7),
    )
    settings = project_settings(uow, "p")
    assert settings.collapse is CollapsePolicy.MODE
    assert settings.interval_method is IntervalMethod.BOOTSTRAP
    assert (settings.interval_level, settings.bootstrap_resamples) == (0.9, 200)
    assert settings.windows_days == (7, 30)


@pytest.mark.parametrize(
    ("slug", "categories", "fields", "message"),
    [
        ("Bad Slug", ["a", "b"], {}, "slug"),
        ("p", ["a"], {}, "categories"),
        ("p", ["a", "a"], {}, "appears twice"),
        ("p", ["a", " "], {}, "empty"),
        ("p", ["a", "b\tc"], {}, "control character"),
        ("p", ["a", "b"], {"interval_level": 1.5}, "interval_level"),
        ("p", ["a", "b"], {"collapse": "median"}, "collapse"),
        ("p", ["a", "b"], {"windows_days": (0,)}, "windows_days"),
        ("p", ["a", "b"], {"windows_days": (30, 7, 7)}, "windows_days repeats 7d"),
    ],
)
def test_invalid_projects_are_refused(uow, count_rows, slug, categories, fields, message) -> None:
    with pytest.raises(Invalid, match=message):
        create_project(uow, slug, categories, **fields)
    assert count_rows()["projects"] == 0


def test_slug_is_unique(uow) -> None:
    create_project(uow, "p", ["a", "b"])
    with pytest.raises(Conflict):
        create_project(uow, "p", ["c", "d"])


def test_unknown_project(uow) -> None:
    with pytest.raises(NotFound):
        show_project(uow, "nope")
    with pytest.raises(NotFound):
        add_categories(uow, "nope", ["x"])


def test_categories_can_be_added_but_not_renamed_or_removed_once_used(uow, count_rows) -> None:
    create_project(uow, "p", ["a", "b", "c"])
    assert add_categories(uow, "p", ["d", "e"]) == ("a", "b", "c", "d", "e")
    with pytest.raises(Invalid, match="appears twice"):
        add_categories(uow, "p", ["a"])
    ingest_labels(uow, "p", [{"item": "i", "rater": "r", "label": "b"}])
    with pytest.raises(Conflict, match="1 label"):
        rename_category(uow, "p", "b", "bee")
    with pytest.raises(Conflict, match="1 label"):
        remove_category(uow, "p", "b")
    # Unused ones can go; later ones move up so the indices stay 0..K-1.
    assert rename_category(uow, "p", "c", "sea") == ("a", "b", "sea", "d", "e")
    with pytest.raises(Conflict):
        rename_category(uow, "p", "sea", "a")
    assert remove_category(uow, "p", "sea") == ("a", "b", "d", "e")
    assert show_project(uow, "p").categories == ("a", "b", "d", "e")
    with pytest.raises(NotFound):
        remove_category(uow, "p", "zzz")
    assert count_rows()["categories"] == 4
