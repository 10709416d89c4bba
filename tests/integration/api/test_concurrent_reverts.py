"""Four reverts of one import at once: one is 200, the others 409, and the record keeps the
number of labels the one revert removed (before: all four were 200 on PostgreSQL and the
record said 0 labels removed)."""

from __future__ import annotations

import threading

from tests.integration.api.conftest import World

LABELS = 3000


def test_one_of_four_concurrent_reverts_wins(world: World) -> None:
    client = world.client
    labels = [
        {"item": f"rv-{n // 3}", "rater": f"rv{n % 3}", "label": "normal"} for n in range(LABELS)
    ]
    posted = client.post(
        "/api/v1/projects/alpha/labels", json={"labels": labels}, headers=world.auth("alpha")
    )
    assert posted.status_code == 200, posted.text
    import_id = posted.json()["import_id"]
    url = f"/api/v1/projects/alpha/imports/{import_id}/revert"
    start = threading.Barrier(4)
    answers: list[tuple[int, dict]] = []

    def revert() -> None:
        start.wait()
        response = client.post(url, headers=world.auth())
        answers.append((response.status_code, response.json()))

    threads = [threading.Thread(target=revert) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    codes = sorted(code for code, _ in answers)
    assert codes == [200, 409, 409, 409], answers
    won = next(body for code, body in answers if code == 200)
    assert won["deleted"] == LABELS
    for code, body in answers:
        if code == 409:
            assert f"import {import_id} was already reverted" in body["error"]["message"]
    record = client.get(f"/api/v1/projects/alpha/imports/{import_id}", headers=world.auth())
    assert record.json()["reverted_labels"] == LABELS
    history = client.get(
        "/api/v1/projects/alpha/history", params={"metric": "kappa_s"}, headers=world.auth()
    )
    assert history.status_code == 200
    marks = [m for m in history.json()["reverts"] if m["import_id"] == import_id]
    assert [m["labels"] for m in marks] == [LABELS]
