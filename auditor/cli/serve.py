"""``auditor serve``: the API (and dashboard) with uvicorn; embedded mode also recomputes."""

from __future__ import annotations

from typing import Annotated

import typer

from auditor.config import get_settings


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: Annotated[str, typer.Option(help="address to bind")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="port to bind")] = 8000,
        workers: Annotated[int, typer.Option(help="uvicorn worker processes")] = 1,
    ) -> None:
        """Serve the HTTP API and the dashboard. Without AUDITOR_BROKER_URL (embedded mode) the
        same process recomputes dirty projects every AUDITOR_SCAN_INTERVAL_SECONDS."""
        import uvicorn

        settings = get_settings()
        mode = "embedded" if settings.broker_url is None else "distributed"
        typer.echo(f"auditor serving on http://{host}:{port} ({mode} mode)")
        uvicorn.run(
            "auditor.server:build_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=settings.log_level.lower(),
            # The peer stays the TCP peer: which proxy to believe is AUDITOR_TRUSTED_PROXIES'
            # decision (auditor.services.access.client_access), not uvicorn's loopback default.
            proxy_headers=False,
        )
