"""Dashboard routes: projects, one project, one rater; sign-in for the operator token.

Handlers are plain ``def`` (run in the thread pool) because the read services are
synchronous. Pages are left out of the OpenAPI document: they are not part of the JSON API.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from auditor.config import Settings, get_settings
from auditor.errors import DatabaseUnavailable, NotFound, typed_cause
from auditor.presentation.pages import STATIC, Renderer
from auditor.services.access.dashboard_sessions import SESSION_LIFETIME, close_session, open_session
from auditor.services.queries.dashboard import (
    project_detail,
    project_pairs,
    projects_overview,
    rater_detail,
)
from auditor.services.queries.pairs import pair_rows, pairs_csv
from auditor.services.recompute.health import failures as recompute_failures
from auditor.storage.db import UNAVAILABLE_RETRY_AFTER_SECONDS, make_engine
from auditor.storage.unit_of_work import UnitOfWork
from auditor.web.access import COOKIE, DashboardAccess

# Seconds a page of a dashboard whose database is down asks the browser to wait.


def install_dashboard(app: FastAPI, *, token: str | None = None) -> None:
    """Add the dashboard pages at ``/`` and their assets at ``/static`` to ``app``.

    The database is ``app.state.engine`` when the app has one, else an engine for
    ``app.state.settings.database_url`` (or the process settings). ``token`` overrides
    ``AUDITOR_DASHBOARD_TOKEN`` ("" for none; see ``auditor.web.access``).
    """
    settings = getattr(app.state, "settings", None) or Settings()  # read when the app is built
    access = DashboardAccess.from_settings(settings, token)
    renderer = Renderer()
    state: dict[str, Any] = {}

    def engine() -> Any:
        found = getattr(app.state, "engine", None)
        if found is not None:
            return found
        if "engine" not in state:
            settings = getattr(app.state, "settings", None) or get_settings()
            state["engine"] = make_engine(settings.database_url)
        return state["engine"]

    def reader() -> UnitOfWork:
        return UnitOfWork(engine(), read_only=True)

    def writer() -> UnitOfWork:
        return UnitOfWork(engine())

    def guarded(request: Request) -> Response | None:
        reason = access.check(request, reader)
        if reason is None:
            return None
        if access.token is not None:
            return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
        return HTMLResponse(renderer.page("error.html", title="Forbidden", message=reason), 403)

    def not_found(error: NotFound) -> HTMLResponse:
        return HTMLResponse(renderer.page("error.html", title="Not found", message=str(error)), 404)

    def unavailable() -> HTMLResponse:
        message = "The database cannot be reached; try again in a little while."
        page = renderer.page("error.html", title="Database unavailable", message=message)
        return HTMLResponse(
            page, 503, headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER_SECONDS)}
        )

    def html_when_down(handler: Callable[..., Any]) -> Callable[..., Any]:
        """A page whose database is down answers an HTML 503 page, not the API's JSON."""
        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await handler(*args, **kwargs)
                except Exception as error:
                    if typed_cause(error, (DatabaseUnavailable,)) is not None:
                        return unavailable()
                    raise

            return wrapped_async

        @functools.wraps(handler)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except Exception as error:
                if typed_cause(error, (DatabaseUnavailable,)) is not None:
                    return unavailable()
                raise

        return wrapped

    app.mount("/static", StaticFiles(directory=STATIC), name="dashboard-static")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    @html_when_down
    def projects_page(request: Request) -> Response:
        refused = guarded(request)
        if refused is not None:
            return refused
        cards = projects_overview(reader())
        failing = {row.slug: row for row in recompute_failures(reader()) if row.consecutive}
        return HTMLResponse(
            renderer.page("projects.html", title="Projects", cards=cards, failing=failing)
        )

    @app.get("/projects/{slug}", response_class=HTMLResponse, include_in_schema=False)
    @html_when_down
    def project_page(request: Request, slug: str) -> Response:
        refused = guarded(request)
        if refused is not None:
            return refused
        try:
            detail = project_detail(reader(), slug)
        except NotFound as error:
            return not_found(error)
        return HTMLResponse(renderer.project_page(detail))

    @app.get("/projects/{slug}/pairs.{form}", include_in_schema=False)
    @html_when_down
    def pairs_download(request: Request, slug: str, form: str) -> Response:
        """The full pairwise matrix of the latest snapshot, one row per pair (the page shows
        a summary above a few dozen raters)."""
        refused = guarded(request)
        if refused is not None:
            return refused
        if form not in ("csv", "json"):
            return not_found(NotFound(f"no pairs.{form}: ask for pairs.csv or pairs.json"))
        try:
            pairs = project_pairs(reader(), slug)
        except NotFound as error:
            return not_found(error)
        name = f'attachment; filename="{slug}-pairs.{form}"'
        if form == "csv":
            return Response(
                pairs_csv(pairs), media_type="text/csv", headers={"Content-Disposition": name}
            )
        return JSONResponse(pair_rows(pairs), headers={"Content-Disposition": name})

    @app.get("/projects/{slug}/raters", response_class=HTMLResponse, include_in_schema=False)
    @html_when_down
    def raters_page(request: Request, slug: str) -> Response:
        """Every rater of the project (the project page shows those of most concern above a
        few dozen), with the pairwise summary."""
        refused = guarded(request)
        if refused is not None:
            return refused
        try:
            detail = project_detail(reader(), slug, all_raters=True)
        except NotFound as error:
            return not_found(error)
        return HTMLResponse(renderer.raters_page(detail))

    @app.get(
        "/projects/{slug}/raters/{rater}", response_class=HTMLResponse, include_in_schema=False
    )
    @html_when_down
    def rater_page(request: Request, slug: str, rater: str) -> Response:
        refused = guarded(request)
        if refused is not None:
            return refused
        try:
            detail = rater_detail(reader(), slug, rater)
        except NotFound as error:
            return not_found(error)
        return HTMLResponse(renderer.rater_page(detail))

    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_form(next: str = "/") -> Response:
        return HTMLResponse(renderer.page("login.html", title="Sign in", next=_local(next)))

    @app.post("/login", include_in_schema=False)
    @html_when_down
    async def login(request: Request) -> Response:
        clients = access.client_key(request)
        wait = access.limiter.wait(clients)  # failures only are counted, below
        if wait is not None:
            message = f"too many sign-in attempts; try again in {int(wait) + 1} s"
            page = renderer.page("error.html", title="Too many attempts", message=message)
            return HTMLResponse(page, 429, headers={"Retry-After": str(int(wait) + 1)})
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        candidate = (form.get("token") or [""])[0]
        target = _local((form.get("next") or ["/"])[0])
        if not access.token_matches(candidate):
            access.limiter.failed(clients)
            page = renderer.page("login.html", title="Sign in", next=target, failed=True)
            return HTMLResponse(page, 401)
        session_id = await run_in_threadpool(open_session, writer())
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            COOKIE,
            session_id,
            max_age=int(SESSION_LIFETIME.total_seconds()),
            httponly=True,
            samesite="strict",
            secure=access.secure_cookie(request),
        )
        return response

    @app.get("/logout", include_in_schema=False)
    @html_when_down
    def logout(request: Request) -> Response:
        session_id = request.cookies.get(COOKIE)
        if session_id:
            close_session(writer(), session_id)  # a copy of the cookie dies with it
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(
            COOKIE, httponly=True, samesite="strict", secure=access.secure_cookie(request)
        )
        return response


def _local(target: str) -> str:
    """Only redirect to a path on this site (an open redirect would help phishing).

    Browsers read a backslash as a slash and drop tabs and newlines from a URL, so
    ``/\\evil.example`` and ``/<TAB>/evil.example`` lead away as ``//evil.example`` does.
    """
    if not target.startswith("/") or "\\" in target or any(c < " " or c == "\x7f" for c in target):
        return "/"
    return "/" if target.startswith("//") else target
