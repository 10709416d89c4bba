"""One Settings object for the whole service, read from the environment (prefix AUDITOR_).

With nothing set, the service runs embedded: a SQLite file in the working directory and
recomputes on an in-process timer. Setting AUDITOR_DATABASE_URL (PostgreSQL through
``postgresql+psycopg://``) and AUDITOR_BROKER_URL (Redis) gives the distributed deployment.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUDITOR_", extra="ignore")

    database_url: str = Field(
        default="sqlite:///auditor.db",
        description="SQLAlchemy URL; the default is a SQLite file in the working directory.",
    )
    broker_url: str | None = Field(
        default=None,
        description="Celery broker (Redis). Unset: recomputes run in-process (embedded mode).",
    )
    scan_interval_seconds: float = Field(
        default=60.0, gt=0, description="How often the scheduler looks for dirty projects."
    )
    recompute_visibility_timeout_seconds: int = Field(
        default=3600, gt=0, description="Broker visibility timeout; above the slowest recompute."
    )
    import_batch_size: int = Field(
        default=10_000, gt=0, le=1_000_000, description="Rows per batch when importing files."
    )
    api_max_body_bytes: int = Field(default=10 * 1024 * 1024, gt=0)
    api_max_batch_labels: int = Field(default=10_000, gt=0)
    admin_token: SecretStr | None = Field(
        default=None,
        description=(
            "Operator token for POST /api/v1/projects (Bearer). Unset: projects are created "
            "with the CLI only."
        ),
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description=(
            "Bearer token for GET /metrics. Unset: /metrics answers only clients on this "
            "machine (loopback, no forwarding header unless from a trusted proxy)."
        ),
    )
    dashboard_token: SecretStr | None = Field(
        default=None,
        description=(
            "Operator token for the dashboard (Bearer or the /login cookie). Unset: the "
            "dashboard answers loopback clients only."
        ),
    )
    allow_private_targets: str = Field(
        default="",
        description=(
            "CIDR list (comma or space separated) of private networks that webhook and SMTP "
            "channels may reach, for the whole deployment. Empty: only public addresses."
        ),
    )
    trusted_proxies: str = Field(
        default="",
        description=(
            "CIDR list of reverse proxies whose forwarding headers (Forwarded, X-Forwarded-For, "
            "X-Real-IP) are believed. Empty: a request carrying one is never local."
        ),
    )
    cookie_secure: bool = Field(
        default=False,
        description="Mark the dashboard cookie Secure even when the request came over HTTP.",
    )
    broker_key_prefix: str | None = Field(
        default=None,
        description="Prefix of every broker key, so deployments can share one Redis database.",
    )
    idempotency_ttl_seconds: float = Field(
        default=7 * 86400,
        gt=0,
        description="How long an Idempotency-Key is remembered; the scheduler prunes older ones.",
    )
    max_bootstrap_resamples: int = Field(
        default=10_000,
        gt=0,
        le=10_000,
        description="Cap on a project's bootstrap_resamples (at most 10,000; may be lowered).",
    )
    max_windows: int = Field(
        default=5,
        ge=0,
        le=5,
        description="Cap on a project's rolling windows (at most 5; may be lowered).",
    )
    kept_snapshot_labels: int = Field(
        default=250_000,
        ge=0,
        description=(
            "From this many labels on, a project's cumulative snapshot is computed from its "
            "kept statistics (cost of the labels since the last recompute) instead of from "
            "every label; 0: always. Bootstrap projects always read every label."
        ),
    )
    kept_full_pass_seconds: float = Field(
        default=600.0,
        gt=0,
        description=(
            "A project served from its kept statistics still gets a recompute from every "
            "label (for the measures not kept yet) at most this often, and never more often "
            "than ten times its own duration."
        ),
    )
    log_level: str = "INFO"

    @field_validator("allow_private_targets", "trusted_proxies")
    @classmethod
    def _networks_parse(cls, value: str) -> str:
        parse_networks(value)  # a typo fails at start-up, naming the entry
        return value

    @property
    def private_target_networks(
        self,
    ) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return parse_networks(self.allow_private_targets)

    @property
    def trusted_proxy_networks(
        self,
    ) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
        return parse_networks(self.trusted_proxies)


def parse_networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """'10.0.0.0/8, fd00::/8' -> networks; a bare address is a /32 (/128)."""
    networks = []
    for entry in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError as error:
            raise ValueError(f"not a network: {entry!r}: {error}") from None
    return tuple(networks)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings; tests clear the cache after changing the environment."""
    return Settings()
