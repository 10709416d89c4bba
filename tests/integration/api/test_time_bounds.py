"""Issue 11 item 4 over HTTP: out-of-range times are 422 naming the field."""

from __future__ import annotations


def test_api_refuses_out_of_range_times_with_422_naming_the_field(world) -> None:
    client, base = world.client, "/api/v1/projects/alpha"
    auth = world.auth()
    for value in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "2100-01-01T00:00Z"):
        body = {"labels": [{"item": "t", "rater": "a1", "label": "normal", "labeled_at": value}]}
        response = client.post(f"{base}/labels", json=body, headers=auth)
        assert response.status_code == 422, response.text
        assert "labeled_at" in response.text and "out of range" in response.text
        silence = {"ends_at": value, "subject": "project", "reason": "x"}
        response = client.post(f"{base}/alerts/silences", json=silence, headers=auth)
        assert response.status_code == 422, response.text
        assert "ends_at" in response.text and "out of range" in response.text
        for path, name in (("snapshots/latest", "at"), ("history", "since"), ("history", "until")):
            params = {name: value, "metric": "kappa_s"}
            response = client.get(f"{base}/{path}", params=params, headers=auth)
            assert response.status_code == 422, (path, response.text)
            assert name in response.text and "out of range" in response.text
    # the reads that broke for good before still answer
    assert client.get(f"{base}/sessions", headers=auth).status_code == 200
