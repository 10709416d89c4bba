"""Ids and names are NFC-normalised and refuse control, bidi-control and zero-width
characters, with a 422 naming the field and the code point; nothing is written."""

from __future__ import annotations

import pytest

LABELS = "/api/v1/projects/alpha/labels"


def _counts(world) -> dict:
    return world.client.get("/api/v1/projects/alpha", headers=world.auth()).json()["counts"]


@pytest.mark.parametrize(
    ("field", "value", "code_point"),
    [
        ("rater", "adm\u202eni", "U+202E"),  # right-to-left override ("Trojan Source")
        ("item", "scan\u200b1", "U+200B"),  # zero-width space: looks like "scan1"
        ("session", "s\u2066x", "U+2066"),  # left-to-right isolate
        ("rater", "\ufeffa1", "U+FEFF"),  # byte order mark / zero-width no-break space
        ("item", "i\x07", "U+0007"),
    ],
)
def test_invisible_characters_in_ids_are_422_naming_row_field_and_code_point(
    world, field, value, code_point
) -> None:
    before = _counts(world)
    good = {"item": "i1", "rater": "a1", "label": "normal"}
    body = {"labels": [good, {**good, "item": "i2", field: value}]}
    answer = world.client.post(LABELS, json=body, headers=world.auth())
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["error"]["details"]
    assert (detail["row"], detail["field"]) == (2, field)
    assert code_point in detail["message"], detail
    assert _counts(world) == before  # the whole batch is refused


def test_category_and_project_names_name_the_field_and_code_point(world) -> None:
    url = "/api/v1/projects/alpha/categories"
    answer = world.client.post(url, json={"names": ["ok", "be\u202enign"]}, headers=world.auth())
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["error"]["details"]
    assert detail["location"] == ["body", "names", "1"] and "U+202E" in detail["message"]

    from tests.integration.api.conftest import OPERATOR_TOKEN

    body = {"slug": "gamma", "name": "Gam\u200dma", "categories": ["a", "b"]}
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    answer = world.client.post("/api/v1/projects", json=body, headers=headers)
    assert answer.status_code == 422, answer.text
    (detail,) = answer.json()["error"]["details"]
    assert detail["location"] == ["body", "name"] and "U+200D" in detail["message"]


def test_ids_are_nfc_normalised_so_two_spellings_are_one_rater(world) -> None:
    decomposed, composed = "Jose\u0301", "Jos\u00e9"  # "José" typed two ways
    labels = [
        {"item": "n1", "rater": decomposed, "label": "normal"},
        {"item": "n2", "rater": composed, "label": "benign"},
    ]
    answer = world.client.post(LABELS, json={"labels": labels}, headers=world.auth())
    assert answer.status_code == 200, answer.text
    raters = world.client.get("/api/v1/projects/alpha/raters", headers=world.auth()).json()
    names = [r["rater"] for r in raters["raters"]]
    assert names.count(composed) == 1 and decomposed not in names, names


def test_a_lookup_is_normalised_like_the_stored_id(world) -> None:
    label = {"item": "n1", "rater": "Jos\u00e9", "label": "normal", "session": "s1"}
    assert world.client.post(LABELS, json={"labels": [label]}, headers=world.auth()).is_success
    decomposed = "/api/v1/projects/alpha/raters/Jose\u0301"
    answer = world.client.get(decomposed, headers=world.auth())
    assert answer.status_code == 200 and answer.json()["rater"] == "Jos\u00e9"
    sessions = world.client.get(
        "/api/v1/projects/alpha/sessions", params={"rater": "Jose\u0301"}, headers=world.auth()
    )
    assert [s["rater"] for s in sessions.json()["sessions"]] == ["Jos\u00e9"]
