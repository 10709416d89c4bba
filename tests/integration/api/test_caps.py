"""Issue 11 item 7: costly settings are capped (422 naming the setting); operators may lower
the caps."""

from __future__ import annotations

from fastapi.testclient import TestClient

from auditor.api import create_app
from auditor.services.projects.projects import create_project
from tests.integration.api.conftest import make_settings

BASE = "/api/v1/projects/alpha/settings"


def _field(response) -> list[str]:
    details = response.json()["error"].get("details") or []
    return [str(d.get("field") or d.get("loc")) for d in details]


def test_over_the_hard_caps_is_422_naming_the_setting(world) -> None:
    client, auth = world.client, world.auth()
    response = client.patch(BASE, json={"bootstrap_resamples": 100_000}, headers=auth)
    assert response.status_code == 422 and "bootstrap_resamples" in response.text
    response = client.patch(BASE, json={"windows_days": [1, 2, 3, 4, 5, 6]}, headers=auth)
    assert response.status_code == 422 and "windows_days" in response.text
    ok = client.patch(
        BASE, json={"bootstrap_resamples": 10_000, "windows_days": [1, 2, 3, 4, 5]}, headers=auth
    )
    assert ok.status_code == 200, ok.text


def test_operator_caps_lower_the_limits(world) -> None:
    settings = make_settings(world.engine_url, max_bootstrap_resamples=500, max_windows=1)
    with TestClient(create_app(settings)) as client:
        auth = world.auth()
        response = client.patch(BASE, json={"bootstrap_resamples": 501}, headers=auth)
        assert response.status_code == 422
        assert "over the cap of 500" in response.text and "bootstrap_resamples" in _field(response)
        response = client.patch(BASE, json={"windows_days": [7, 30]}, headers=auth)
        assert response.status_code == 422 and "windows_days" in _field(response)
        assert client.patch(BASE, json={"windows_days": [7]}, headers=auth).status_code == 200


def test_service_create_refuses_over_the_cap(uow) -> None:
    import pytest

    from auditor.services.projects.settings import InvalidSetting

    with pytest.raises(InvalidSetting, match="bootstrap_resamples 20000 is over the cap"):
        create_project(uow, "big", ["a", "b"], bootstrap_resamples=20_000)
    with pytest.raises(InvalidSetting, match="windows_days has 6 windows"):
        create_project(uow, "wide", ["a", "b"], windows_days=(1, 2, 3, 4, 5, 6))
