"""Label Studio end to end: a real Label Studio 1.23.2 and ``auditor serve`` on loopback.

Through Label Studio's own API: four annotators sign up, a project with two Choices controls
(the label, ``finding``, and ``quality``) gets 24 tasks whose data carry the case id; the
webhook points at auditor with a key made for it. Annotations are created, edited, deleted,
skipped, filled in both controls or only in the other one; a judge model's predictions of two
versions are added, some accepted in bulk; a task is deleted. auditor is stopped mid-stream
and changes are made while it is down; a webhook with a wrong key is refused (and counted);
``auditor label-studio sync`` recovers everything, a second sync changes nothing, and the
snapshot's numbers equal ``auditor stats --format label-studio`` on Label Studio's own export
to 1e-12. Then a hidden repeat is planned as a new Label Studio task, annotated, and fulfils
the plan. Tests run in file order on one running world.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.e2e.label_studio.label_studio_server import (
    ADMIN_TOKEN,
    LabelStudio,
    free_port,
    ok,
    running,
)
from tests.services import POSTGRES_ADMIN_URL, require_postgres

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
SLUG = "cxr"
CATEGORIES = ["Normal", "Pneumonia", "Effusion"]
QUALITY = ["Good", "Poor"]
CONFIG = """<View>
  <Image name="image" value="$image"/>
  <Choices name="finding" toName="image" choice="single">
    <Choice value="Normal"/><Choice value="Pneumonia"/><Choice value="Effusion"/>
  </Choices>
  <Choices name="quality" toName="image" choice="single">
    <Choice value="Good"/><Choice value="Poor"/>
  </Choices>
</View>"""
TASKS = 24


def result(finding: str | None = None, quality: str | None = None) -> list[dict[str, Any]]:
    out = []
    for name, value in (("finding", finding), ("quality", quality)):
        if value is not None:
            out.append(
                {"from_name": name, "to_name": "image", "type": "choices",
                 "value": {"choices": [value]}}
            )  # fmt: skip
    return out


@dataclass
class World:
    ls: LabelStudio
    env: dict[str, str]
    tmp: Path
    base_url: str = ""
    key: str = ""  # the webhook's label-studio key
    admin_key: str = ""
    ls_project: int = 0
    task_ids: list[int] = field(default_factory=list)
    annotators: dict[int, httpx.Client] = field(default_factory=dict)  # user id -> client
    api: subprocess.Popen[bytes] | None = None
    webhook_id: int = 0
    # (id, task, user, finding) of every annotation made through the API
    annotations: list[tuple[int, int, int, str | None]] = field(default_factory=list)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(BIN / "auditor"), *args], cwd=REPO, env=self.env, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
        if check:
            assert done.returncode == 0, f"auditor {' '.join(args)}:\n{done.stderr}"
        return done

    def start_api(self) -> None:
        log = (self.tmp / "api.log").open("ab")
        self.api = subprocess.Popen(
            [str(BIN / "auditor"), "serve", "--host", "127.0.0.1", "--port",
             self.base_url.rsplit(":", 1)[1]],
            cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code in (200, 503):
                    return
            assert self.api.poll() is None, (self.tmp / "api.log").read_text()
            assert time.monotonic() < deadline, "auditor serve did not answer"
            time.sleep(0.2)

    def stop_api(self) -> None:
        if self.api is not None and self.api.poll() is None:
            os.killpg(self.api.pid, signal.SIGTERM)
            self.api.wait(timeout=30)

    def annotate(self, user: int, task: int, finding: str | None, quality: str | None = None,
                 **extra: object) -> int:  # fmt: skip
        body = {"result": result(finding, quality), **extra}
        made = ok(self.annotators[user].post(f"/api/tasks/{task}/annotations", json=body))
        self.annotations.append((int(made["id"]), task, user, finding))
        return int(made["id"])

    def edit(self, position: int) -> None:
        """Change the finding of the annotation made ``position``-th to another one."""
        ident, task, user, finding = self.annotations[position]
        other = next(c for c in CATEGORIES if c != finding)
        ok(self.annotators[user].patch(f"/api/annotations/{ident}", json={"result": result(other)}))
        self.annotations[position] = (ident, task, user, other)

    def delete(self, position: int) -> None:
        ident, _, user, _ = self.annotations[position]
        assert self.annotators[user].delete(f"/api/annotations/{ident}").status_code == 204

    def metrics(self) -> str:
        return httpx.get(f"{self.base_url}/metrics", timeout=10).text

    def admin_get(self, path: str) -> Any:
        headers = {"Authorization": f"Bearer {self.admin_key}"}
        return ok(httpx.get(f"{self.base_url}{path}", headers=headers, timeout=10))


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    require_postgres()
    tmp = tmp_path_factory.mktemp("label-studio-e2e")
    database = f"auditor_t_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    url = make_url(POSTGRES_ADMIN_URL).set(database=database).render_as_string(False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUDITOR_")}
    # embedded mode, its timer out of the way: the test recomputes when it means to
    env.update(AUDITOR_DATABASE_URL=url, AUDITOR_SCAN_INTERVAL_SECONDS="3600", PYTHONUNBUFFERED="1")
    ls_dir = tmp / "label-studio"
    ls_dir.mkdir()
    try:
        with running(ls_dir) as ls:
            w = World(ls, env, tmp)
            w.base_url = f"http://127.0.0.1:{free_port()}"
            try:
                yield w
            finally:
                w.stop_api()
    finally:
        with psycopg.connect(_libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def test_setup_through_both_apis(world: World) -> None:
    w = world
    w.run("db", "upgrade")
    w.run("project", "create", SLUG, "--categories", ",".join(CATEGORIES))
    w.admin_key = w.run("keys", "create", SLUG, "--role", "admin").stdout.split()[-1]
    w.key = w.run("keys", "create", SLUG, "--role", "label-studio").stdout.split()[-1]
    project = ok(w.ls.admin.post("/api/projects", json={"title": "CXR", "label_config": CONFIG}))
    w.ls_project = int(project["id"])
    tasks = [{"image": f"http://127.0.0.1:9/cxr/{i:03d}.png", "case": f"case-{i:03d}"}
             for i in range(1, TASKS + 1)]  # fmt: skip
    ok(w.ls.admin.post(f"/api/projects/{w.ls_project}/import", json=tasks))
    listed = ok(w.ls.admin.get("/api/tasks", params={"project": w.ls_project, "page_size": 100}))
    w.task_ids = sorted(int(t["id"]) for t in listed["tasks"])
    assert len(w.task_ids) == TASKS
    w.run("label-studio", "settings", SLUG, "--item-field", "data.case", "--from-name",
          "finding", "--url", w.ls.url, "--token", ADMIN_TOKEN,
          "--ls-project", str(w.ls_project))  # fmt: skip
    w.start_api()
    hook = ok(
        w.ls.admin.post(
            "/api/webhooks",
            json={
                "project": w.ls_project,
                "url": f"{w.base_url}/api/v1/projects/{SLUG}/integrations/label-studio",
                "send_payload": True,
                "send_for_all_actions": True,
                "headers": {"Authorization": f"Bearer {w.key}"},
            },
        )
    )
    w.webhook_id = int(hook["id"])
    for n in range(4):
        annotator = w.ls.signup(f"reader{n + 1}@example.com")
        me = ok(annotator.get("/api/current-user/whoami"))
        w.annotators[int(me["id"])] = annotator


def test_annotations_edits_deletions_and_predictions_arrive_live(world: World) -> None:
    w = world
    rng = random.Random(28)
    users = sorted(w.annotators)
    truth = {task: rng.choice(CATEGORIES) for task in w.task_ids}
    for task in w.task_ids:
        for user in rng.sample(users, 3):
            finding = truth[task] if rng.random() < 0.8 else rng.choice(CATEGORIES)
            quality = rng.choice(QUALITY) if rng.random() < 0.4 else None
            w.annotate(user, task, finding, quality)
    first_user = users[0]
    w.annotate(first_user, w.task_ids[0], None, "Poor")  # only the other control: skipped
    w.annotate(first_user, w.task_ids[1], None, was_cancelled=True)  # a skipped task
    # a judge model, two versions; version 1 on every task, version 2 on half
    for task in w.task_ids:
        for version, share in (("judge-v1", 1.0), ("judge-v2", 0.5)):
            if rng.random() < share:
                label = truth[task] if rng.random() < 0.75 else rng.choice(CATEGORIES)
                body = {"task": task, "result": result(label), "model_version": version,
                        "score": 0.9}  # fmt: skip
                ok(w.ls.admin.post("/api/predictions", json=body))
    # "Create Annotations From Predictions" on 4 tasks: ANNOTATIONS_CREATED, accepted unchanged
    action = {"selectedItems": {"all": False, "included": w.task_ids[2:6]},
              "model_version": "judge-v1"}  # fmt: skip
    params = {"id": "predictions_to_annotations", "project": w.ls_project}
    ok(w.ls.admin.post("/api/dm/actions", params=params, json=action))
    # edits and deletions by their annotators
    for position in (3, 4, 5):
        w.edit(position)
    for position in (8, 9):
        w.delete(position)
    assert w.ls.admin.delete(f"/api/tasks/{w.task_ids[-1]}").status_code == 204
    w.task_ids.pop()
    # every call was taken, and the labels are there
    assert f'auditor_label_studio_rejected_total{{project="{SLUG}"' not in w.metrics()
    assert w.admin_get(f"/api/v1/projects/{SLUG}")["counts"]["labels"] > 50


def test_an_outage_and_a_wrong_key_are_recovered_by_the_sync(world: World) -> None:
    w = world
    users = sorted(w.annotators)
    w.stop_api()
    # changes while auditor is down: Label Studio posts each once and gives up
    for task in w.task_ids[:4]:
        w.annotate(users[3], task, "Pneumonia")
    w.edit(12)
    w.delete(14)
    w.start_api()
    # a wrong key on the webhook: refused (401) and counted
    wrong = {"headers": {"Authorization": "Bearer aud_not-the-key"}}
    ok(w.ls.admin.patch(f"/api/webhooks/{w.webhook_id}", json=wrong))
    w.annotate(users[2], w.task_ids[5], "Normal")
    w.annotate(users[2], w.task_ids[6], "Effusion")
    right = {"headers": {"Authorization": f"Bearer {w.key}"}}
    ok(w.ls.admin.patch(f"/api/webhooks/{w.webhook_id}", json=right))
    metrics = w.metrics()
    assert f'auditor_label_studio_rejected_total{{project="{SLUG}",status="401"}} 2.0' in metrics
    assert f'auditor_label_studio_rejected_since_sync{{project="{SLUG}"}} 2.0' in metrics
    # the next snapshot shows it, and the default rule warns
    w.run("recompute", SLUG, "--force")
    states = w.admin_get(f"/api/v1/projects/{SLUG}/alerts/states")["states"]
    assert _state(states) == "firing", states
    # the sync recovers every lost change; a second one changes nothing
    first = json.loads(w.run("label-studio", "sync", SLUG, "--json").stdout)
    assert first["created"] >= 6 and first["updated"] >= 1 and first["deleted"] >= 1, first
    again = json.loads(w.run("label-studio", "sync", SLUG, "--json").stdout)
    assert (again["created"], again["updated"], again["deleted"]) == (0, 0, 0), again
    assert f'auditor_label_studio_rejected_since_sync{{project="{SLUG}"}} 0.0' in w.metrics()
    w.run("recompute", SLUG, "--force")
    states = w.admin_get(f"/api/v1/projects/{SLUG}/alerts/states")["states"]
    assert _state(states) == "ok", states


def _state(states: list[dict[str, Any]]) -> str:
    """The status of the default rule on refused Label Studio calls."""
    (found,) = [s for s in states if s["rule_id"].endswith("default:label_studio_rejected")]
    return str(found["status"])


def _numbers(shape: Any, prefix: str = "") -> dict[str, float | None]:
    """Every number of a stats JSON (measures, raters, models), by its path."""
    out: dict[str, float | None] = {}
    if isinstance(shape, dict):
        for key, value in shape.items():
            out.update(_numbers(value, f"{prefix}/{key}"))
    elif isinstance(shape, list):
        for n, value in enumerate(shape):
            out.update(_numbers(value, f"{prefix}/{n}"))
    elif isinstance(shape, int | float) and not isinstance(shape, bool):
        out[prefix] = float(shape)
    elif shape is None:
        out[prefix] = None
    return out


def test_the_snapshot_equals_auditor_stats_on_label_studios_export(world: World) -> None:
    w = world
    # Label Studio's own export, with the predictions written out (not as ids)
    made = ok(
        w.ls.admin.post(
            f"/api/projects/{w.ls_project}/exports",
            json={"title": "e2e", "serialization_options": {"predictions": {"only_id": False}}},
        )
    )
    export = w.tmp / "export.json"
    download = w.ls.admin.get(
        f"/api/projects/{w.ls_project}/exports/{made['id']}/download",
        params={"exportType": "JSON"},
    )
    assert download.status_code == 200
    export.write_bytes(download.content)
    stats = w.run(
        "stats", str(export), "--format", "label-studio", "--item-field", "data.case",
        "--from-name", "finding", "--categories", ",".join(CATEGORIES), "--json",
    )  # fmt: skip
    expected = json.loads(stats.stdout)
    w.run("recompute", SLUG, "--force")
    snapshot = json.loads(w.run("snapshot", SLUG).stdout)
    assert set(expected["models"]) == {"judge-v1", "judge-v2"}  # model raters by version
    compared = 0
    for section in ("measures", "raters", "models"):
        want, have = _numbers(expected[section]), _numbers(snapshot[section])
        assert want.keys() == have.keys(), section
        for path, value in want.items():
            got = have[path]
            if value is None or got is None:
                assert value == got, path
            else:
                assert math.isclose(value, got, rel_tol=0, abs_tol=1e-12), (path, value, got)
            compared += 1
    assert compared > 100
    history = w.run("history", SLUG, "--metric", "s", "--subject", "model:judge-v2")
    assert "cumulative" in history.stdout


def test_a_hidden_repeat_as_a_new_label_studio_task_fulfils_the_plan(world: World) -> None:
    w = world
    w.run("repeats", "settings", SLUG, "--share", "1", "--min-gap-hours", "0",
          "--min-gap-items", "0")  # fmt: skip
    rater = sorted(w.annotators)[1]
    made = w.run("label-studio", "repeats", SLUG, str(rater), "-n", "1", "--request-id", "r1")
    line = made.stdout.splitlines()[0]
    item, task = line.split("\t")[0], int(line.split("\t")[1].removeprefix("task "))
    assert task not in w.task_ids  # a new task, carrying the original item
    assert ok(w.ls.admin.get(f"/api/tasks/{task}"))["data"]["case"] == item
    again = w.run("label-studio", "repeats", SLUG, str(rater), "-n", "1", "--request-id", "r1")
    assert f"task {task}" in again.stdout  # a retry creates no second task
    w.annotate(rater, task, "Normal")
    status = w.run("repeats", "status", SLUG).stdout
    row = next(r for r in status.splitlines() if r.split()[0] == str(rater))
    planned, fulfilled = int(row.split()[1]), int(row.split()[2])
    assert (planned, fulfilled) == (1, 1), status
