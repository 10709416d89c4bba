"""A small client of Label Studio's HTTP API (as 1.23 answers it; docs/integrations.md).

Authentication: a legacy token (``Authorization: Token <key>``, the "Access Token" of older
versions and of organisations that keep legacy tokens on), or a personal access token (a JWT
refresh token, exchanged at ``/api/token/refresh`` for a short-lived access token sent as
``Bearer``). The client tells them apart by shape.

Calls:
- ``export(project)``: ``GET /api/projects/{id}/export?exportType=JSON&download_all_tasks=true``,
  every task with its annotations, predictions as ids;
- ``predictions(project)``: ``GET /api/predictions?project={id}``, every prediction with its
  ``model_version`` and ``result`` (so ``tasks_with_predictions`` can put them in the export);
- ``prediction(id)``, ``task(id)``;
- ``create_task(project, data)``: ``POST /api/tasks``, a new task (a hidden repeat);
- ``assign(project, task, user)``: the Enterprise edition's task assignment (the Community
  edition answers 404: there is no per-annotator queue).

Every failure is a ``LabelStudioUnavailable`` naming the call and what came back (never the
token). Nothing here knows about auditor's projects or labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from auditor.errors import Failure

TIMEOUT = httpx.Timeout(connect=5.0, read=120.0, write=30.0, pool=5.0)  # an export can be big
ANSWER_SHOWN = 300  # characters of an error answer kept in the message


class LabelStudioUnavailable(Failure):
    """Label Studio could not be reached, refused the token, or answered an error."""

    code = "label_studio_unavailable"


def _is_jwt(token: str) -> bool:
    parts = token.split(".")
    return len(parts) == 3 and token.startswith("eyJ")


@dataclass
class LabelStudioApi:
    url: str  # e.g. http://127.0.0.1:8080 (a path prefix is kept)
    token: str = field(repr=False)
    timeout: httpx.Timeout = field(default_factory=lambda: TIMEOUT)
    _access: str | None = field(default=None, repr=False)

    def _base(self) -> str:
        return self.url.rstrip("/")

    def _headers(self) -> dict[str, str]:
        if not _is_jwt(self.token):
            return {"Authorization": f"Token {self.token}"}
        if self._access is None:
            answer = self._call("POST", "/api/token/refresh", {}, body={"refresh": self.token})
            access = answer.get("access") if isinstance(answer, Mapping) else None
            if not isinstance(access, str):
                raise LabelStudioUnavailable(
                    "Label Studio did not exchange the personal access token for an access token"
                )
            self._access = access
        return {"Authorization": f"Bearer {self._access}"}

    def _call(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        *,
        params: dict[str, Any] | None = None,
        body: object = None,
    ) -> Any:
        where = f"{method} {self._base()}{path}"
        try:
            with httpx.Client(timeout=self.timeout, follow_redirects=False) as client:
                response = client.request(
                    method, self._base() + path, headers=headers, params=params, json=body
                )
        except httpx.HTTPError as error:
            raise LabelStudioUnavailable(f"{where}: {type(error).__name__}: {error}") from None
        if response.status_code >= 400:
            shown = response.text[:ANSWER_SHOWN].strip()
            hint = " (check the token)" if response.status_code in (401, 403) else ""
            raise LabelStudioUnavailable(f"{where}: HTTP {response.status_code}{hint}: {shown}")
        try:
            return response.json()
        except ValueError:
            raise LabelStudioUnavailable(f"{where}: the answer is not JSON") from None

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call("GET", path, self._headers(), params=params)

    def post(self, path: str, body: object) -> Any:
        return self._call("POST", path, self._headers(), body=body)

    def export(self, project: int) -> list[Any]:
        found = self.get(
            f"/api/projects/{project}/export",
            {"exportType": "JSON", "download_all_tasks": "true"},
        )
        if not isinstance(found, list):
            raise LabelStudioUnavailable(f"project {project}: the export is not a list of tasks")
        return found

    def predictions(self, project: int) -> list[Any]:
        found = self.get("/api/predictions", {"project": project})
        if not isinstance(found, list):
            raise LabelStudioUnavailable(f"project {project}: the predictions are not a list")
        return found

    def prediction(self, ident: str) -> dict[str, Any]:
        found = self.get(f"/api/predictions/{ident}")
        if not isinstance(found, dict):
            raise LabelStudioUnavailable(f"prediction {ident}: not an object")
        return found

    def task(self, ident: str) -> dict[str, Any]:
        found = self.get(f"/api/tasks/{ident}")
        if not isinstance(found, dict):
            raise LabelStudioUnavailable(f"task {ident}: not an object")
        return found

    def create_task(self, project: int, data: Mapping[str, Any]) -> dict[str, Any]:
        found = self.post("/api/tasks", {"project": project, "data": dict(data)})
        if not isinstance(found, dict) or "id" not in found:
            raise LabelStudioUnavailable(f"project {project}: the new task has no id")
        return found

    def assign(self, project: int, task: int, user: int) -> None:
        """Enterprise: put ``task`` in ``user``'s queue (the Community edition has none)."""
        self.post(
            f"/api/projects/{project}/tasks/assignees",
            {"type": "AN", "users": [user], "selectedItems": {"all": False, "included": [task]}},
        )


def tasks_with_predictions(tasks: list[Any], predictions: list[Any]) -> list[Any]:
    """The export's tasks with each prediction id replaced by the prediction itself."""
    by_id = {p.get("id"): p for p in predictions if isinstance(p, Mapping)}
    merged = []
    for task in tasks:
        if isinstance(task, Mapping) and isinstance(task.get("predictions"), list):
            task = {
                **task,
                "predictions": [
                    by_id.get(p, p) if not isinstance(p, Mapping) else p
                    for p in task["predictions"]
                ],
            }
        merged.append(task)
    return merged
