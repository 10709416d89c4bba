"""Every method of ``auditor.client.Client`` against a real ``auditor serve`` on PostgreSQL
(the ``served`` fixture: limits below the defaults, three days of labels)."""

from __future__ import annotations

import math

import httpx
import numpy as np
import pytest

from auditor.client import Client, Label, LabelsRejected, RemoteError
from auditor.client import calls as client_calls
from auditor.errors import AuditorError, Conflict, Invalid, NotFound
from tests.integration.client.conftest import PROJECT, RATERS, T0, client_of, judged_labels

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]


def test_the_key_names_its_project_and_role(served) -> None:
    with client_of(served, "read") as client:
        info = client.key_info()
        assert (info.project, info.role) == (PROJECT, "read")
        project = client.project()
    assert project.slug == PROJECT and project.categories == ("normal", "benign", "malignant")
    assert project.counts["labels"] == served.label_count() > 0


def test_a_repeated_post_replays_and_writes_nothing(served) -> None:
    rows = judged_labels(range(100, 130), ("a1", "a2"), 3)
    with client_of(served, "ingest") as client:
        before = served.label_count()
        first = client.post_labels(rows, idempotency_key="once")
        again = client.post_labels(rows, idempotency_key="once")
    assert (first.labels, first.inserted, first.replayed) == (60, 60, 0)
    assert (again.inserted, again.batches, again.replayed) == (60, first.batches, first.batches)
    assert again.import_ids == first.import_ids
    assert served.label_count() == before + 60


def test_labels_as_records_times_and_numpy_values(served) -> None:
    rows = [
        Label(f"rec-{i}", "a2", "benign", session="s-rec", labeled_at=T0.replace(hour=i))
        for i in range(3)
    ]
    rows.append({"item": np.int64(7), "rater": "a2", "label": "normal"})  # type: ignore[list-item]
    with client_of(served, "ingest") as client:
        result = client.post_labels(rows)
        again = client.post_labels(rows[:3])  # natural identity: (item, rater, session, time)
    assert (result.inserted, again.inserted, again.duplicates) == (4, 0, 3)


def test_batches_are_cut_to_what_the_server_takes(served) -> None:
    rows = judged_labels(range(200, 447), RATERS, 4)  # 1,235 labels of ~150 bytes
    with client_of(served, "ingest") as client:
        before = served.label_count()
        result = client.post_labels(rows)
        limits = client._state.limits
    assert result.inserted == len(rows) == 1235
    assert limits.batch_labels == 500  # from the first 413's details
    assert limits.body_bytes == 100000  # from a 413 for the body's size
    assert result.batches == len(result.import_ids) >= 3
    assert served.label_count() == before + len(rows)


def test_a_refused_batch_names_the_row_among_all_labels_posted(served) -> None:
    rows = judged_labels(range(500, 740), ("a3", "a2", "a1"), 5)[:700]
    rows[649] = {**rows[649], "label": "cancer"}
    with client_of(served, "ingest") as client:
        before = served.label_count()
        with pytest.raises(LabelsRejected) as caught:
            client.post_labels(rows, batch_size=250)
    error = caught.value
    assert isinstance(error, Invalid) and error.code == "labels_rejected"
    assert [(d["row"], d["field"]) for d in error.details()] == [(650, "label")]
    assert "labels 501-700" in str(error) and "labels 1-500 are stored" in str(error)
    assert error.stored.inserted == 500  # type: ignore[attr-defined]
    assert served.label_count() == before + 500


def test_a_missing_value_is_refused_before_anything_is_sent(served) -> None:
    rows = [{"item": "nan-1", "rater": "a1", "label": "normal", "session": math.nan}]
    with client_of(served, "ingest") as client:
        with pytest.raises(Invalid) as caught:
            client.post_labels(rows)
        assert client.counters.requests == 1  # the key lookup only
    assert caught.value.field == "session"
    assert caught.value.details()[0]["row"] == 1


def test_snapshots(served) -> None:
    with client_of(served, "read") as client:
        latest = client.latest_snapshot()
        again = client.snapshot(latest.id)
        window = client.latest_snapshot("7d")
        waited = client.wait_for_snapshot(labels=1, timeout=5)
        with pytest.raises(NotFound):
            client.latest_snapshot(at="2000-01-01T00:00:00Z")
    lost = Client(served.base, served.keys["read"], project="elsewhere")
    with lost, pytest.raises(NotFound):  # at once, not after the timeout
        lost.wait_for_snapshot(timeout=60)
    assert again == latest and waited.watermark >= 1
    assert latest.meta["scope"] == "cumulative" and window.meta["scope"] == "7d"
    kappa = latest.measure("kappa_s")
    assert kappa is not None and kappa["value"] == latest.result["measures"]["kappa_s"]["value"]
    assert latest.measure("s", "model:judge-v1")["n"] > 0  # type: ignore[index]


def test_history_pages_through_every_point(served, monkeypatch) -> None:
    with client_of(served, "read") as client:
        until = client.wait_for_snapshot(timeout=60).as_of  # later snapshots left out
        whole = client.history("kappa_s", until=until)
        monkeypatch.setattr(client_calls, "HISTORY_PAGE", 2)
        paged = client.history("kappa_s", until=until)
        pair = client.history("cohen_kappa", subject="pair:a2|a1")
        windows = client.history("kappa_s", scopes=["7d"], since=T0)
        alone = client.history("kappa_s", scopes="7d", since=T0)  # one name, not its letters
    assert paged == whole and len(whole) >= 6  # three days, cumulative and 7d each
    assert [p.as_of for p in whole] == sorted(p.as_of for p in whole)
    assert len(pair) > 0 and {p.scope for p in windows} == {"7d"} and alone == windows


def test_history_as_a_dataframe(served) -> None:
    with client_of(served, "read") as client:
        frame = client.history_frame("s", subjects=["model:judge-v1", "model:judge-v2"])
        seven = client.history("kappa_s", scopes=["7d"]).to_frame()
    assert set(frame["subject"]) == {"model:judge-v1", "model:judge-v2"}
    assert str(frame["value"].dtype) == "Float64" and str(frame["as_of"].dtype).endswith("UTC]")
    # an undefined value is missing with its reason, never 0 or NaN
    undefined = seven["reason"].notna()  # the 7d window of 2024's labels is empty now
    assert undefined.any() and seven.loc[undefined, "value"].isna().all()
    assert not (seven["value"] == 0).any() and frame["value"].notna().all()


def test_rater_report_and_repeats(served) -> None:
    with client_of(served, "read") as client:
        report = client.rater_report("a1")
        latest = client.latest_snapshot()
        plan = client.plan_repeats("a1", 3, request_id="plan-1")
        same = client.plan_repeats("a1", 3, request_id="plan-1")
        counts = client.repeat_status("a1")
        everyone = {row.rater: row for row in client.repeat_report()}
        with pytest.raises(NotFound):
            client.rater_report("nobody")
    assert report["rater"] == "a1" and report["self_agreement"]["n"] > 0
    assert report["self_agreement"] == latest.measure("self_agreement", "rater:a1")
    assert plan.items == same.items and len(plan.items) <= 3
    assert counts.outstanding == plan.outstanding and counts.items == ()
    assert set(everyone) >= {"a1", "a2", "a3"}  # the human raters (models repeat nothing)
    a1 = everyone["a1"]
    assert (a1.outstanding, a1.have, a1.needed) == (plan.outstanding, plan.have, plan.needed)
    assert a1.planned == len(plan.items) and a1.self_agreement is not None


def test_imports_and_revert(served) -> None:
    with client_of(served, "admin") as client:
        posted = client.post_labels(judged_labels(range(900, 905), ("a1",), 6))
        found = client.get_import(posted.import_ids[0])
        listed = client.imports()
        done = client.revert_import(found.id)
        with pytest.raises(Conflict):
            client.revert_import(found.id)
        after = client.get_import(found.id)
    assert found.inserted == 5 and found.id in [i.id for i in listed]
    assert (done.deleted, after.reverted_labels) == (5, 5) and after.reverted_at is not None
    with client_of(served, "ingest") as ingest, pytest.raises(RemoteError) as caught:
        ingest.revert_import(found.id)
    assert (caught.value.status, caught.value.code) == (403, "forbidden")


def test_alert_states_history_and_notices(served) -> None:
    admin = {"Authorization": f"Bearer {served.keys['admin']}"}
    base = f"{served.base}/api/v1/projects/{PROJECT}/alerts"
    channel = httpx.post(f"{base}/channels", json={"name": "log", "kind": "log"}, headers=admin)
    assert channel.status_code == 201, channel.text
    rule = {"name": "always", "metric": "kappa_s", "condition": "below", "threshold": 2.0,
            "min_n": 1, "channels": ["log"]}  # fmt: skip
    assert httpx.post(f"{base}/rules", json=rule, headers=admin).status_code == 201
    with client_of(served, "read") as client:
        with client_of(served, "ingest") as ingest:  # a new snapshot evaluates the rule
            ingest.post_labels(judged_labels(range(950, 960), ("a2",), 7))
        client.wait_for_snapshot(timeout=60)
        states = [s for s in client.alert_states() if s.rule_id == f"{PROJECT}:always"]
        history = client.alert_history(rule="always")
        notices = client.notifications()
        with pytest.raises(Invalid) as caught:
            client.alert_history(status="burning")
    assert [s.status for s in states] == ["firing"]
    assert history.evaluations[0].to_status == "firing" and not history.truncated
    assert any(n.rule_id == f"{PROJECT}:always" for n in notices)
    assert caught.value.field == "state"


def test_errors_are_the_projects_own(served) -> None:
    stranger = Client(served.base, "aud_not-a-key", project=PROJECT)
    with stranger, pytest.raises(AuditorError) as caught:
        stranger.history("kappa_s")
    assert (caught.value.code, caught.value.status) == ("unauthorized", 401)  # type: ignore[attr-defined]
    with client_of(served, "read") as client:
        with pytest.raises(Invalid) as invalid:
            client.history("kappa_s", scopes=["fortnight"])
        with pytest.raises(NotFound) as missing:
            client.history("kappa_s", subject="rater:nobody")
    assert (invalid.value.code, invalid.value.field) == ("invalid", "scope")
    assert missing.value.code == "not_found" and "known" in str(missing.value)
