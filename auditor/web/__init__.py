"""The dashboard: the pages of ``auditor.presentation`` over the read services, served.

``install_dashboard(app)`` adds the pages at ``/`` and the static files at ``/static`` to a
FastAPI app (the composition root ``auditor.server`` calls it after ``create_app``). The
dashboard is read-only; see ``auditor.web.access`` for who may read it.
"""

from auditor.web.routes import install_dashboard

__all__ = ["install_dashboard"]
