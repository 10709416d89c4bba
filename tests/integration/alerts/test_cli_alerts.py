"""``auditor alerts ...`` in-process against both backends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import get_settings
from tests.integration.alerts.support import T0, ingest, labels, recompute

HOUR = timedelta(hours=1)


@pytest.fixture
def cli(monkeypatch, database_url) -> Iterator[Callable[..., Any]]:
    runner = CliRunner()
    monkeypatch.setenv("AUDITOR_DATABASE_URL", database_url)
    get_settings.cache_clear()

    def run(*args: str, code: int = 0):
        result = runner.invoke(app, list(args))
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result

    yield run
    get_settings.cache_clear()


def test_rules_channels_status_history(cli, uow, engine, project):
    out = cli("alerts", "channel", "add", "p", "ops", "--kind", "log").stdout
    assert "added log channel ops" in out
    cli(
        "alerts", "add", "p", "--metric", "kappa_s", "--below", "0.5", "--min-n", "5",
        "--name", "kappa", "--channel", "ops", "--repeat-interval", "never",
    )  # fmt: skip
    cli(
        "alerts", "add", "p", "--metric", "self_agreement", "--subject", "every_rater",
        "--scope", "7d", "--drop", "0.2", "--lookback", "7d", "--name", "sa",
    )  # fmt: skip
    listed = cli("alerts", "list", "p").stdout
    assert "p:kappa  kappa_s project cumulative: below 0.5" in listed
    assert "repeat never, channels ops" in listed
    assert "p:sa  self_agreement every_rater 7d: drop > 0.2 vs 7d ago" in listed

    bad = cli("alerts", "add", "p", "--metric", "kappa_s", code=2)
    assert "exactly one condition" in bad.stderr
    missing = cli("alerts", "add", "p", "--metric", "rho", "--below", "1", "--channel", "x", code=1)
    assert "no channel 'x'" in missing.stderr
    drop = cli("alerts", "add", "p", "--metric", "rho", "--drop", "0.1", code=1)
    assert "lookback" in drop.stderr

    ingest(uow, "p", labels(30, T0, agreement=1.0, prefix="g"))
    recompute(uow, project, T0 + HOUR)
    ingest(uow, "p", labels(90, T0 + HOUR, agreement=0.0, prefix="b"))
    recompute(uow, project, T0 + 2 * HOUR)

    status = cli("alerts", "status", "p").stdout
    assert "p:kappa" in status and "firing" in status
    history = cli("alerts", "history", "p", "--rule", "kappa").stdout.splitlines()
    assert len(history) == 2 and "insufficient_data -> ok" in history[1]
    assert "ok -> firing [notice " in history[0]
    delivered = cli("alerts", "deliver").stdout
    assert "via ops: sent" in delivered
    notices = cli("alerts", "history", "p", "--notices").stdout
    assert "firing" in notices and "-> ops: sent after 1 attempt(s)" in notices

    in_use = cli("alerts", "channel", "remove", "p", "ops", code=1)
    assert "used by rules p:kappa" in in_use.stderr
    cli("alerts", "remove", "p", "kappa")
    cli("alerts", "channel", "remove", "p", "ops")
    assert "p:kappa" not in cli("alerts", "list", "p").stdout
    with engine.connect() as connection:  # history outlives the rule
        count = connection.execute(text("SELECT count(*) FROM alert_evaluations")).scalar_one()
    assert count >= 2


def test_defaults_silence_and_webhook_channel(cli, project, monkeypatch):
    assert "p:default:kappa_s" in cli("alerts", "defaults", "p").stdout
    assert "already present" in cli("alerts", "defaults", "p").stdout
    out = cli("alerts", "silence", "p", "--rule", "default:rho", "--for", "2h", "--reason", "x")
    assert out.stdout.startswith("silence 1 until")
    listed = cli("alerts", "silences", "p").stdout
    assert "rule p:default:rho" in listed and "subject *" in listed
    cli("alerts", "unsilence", "p", "1")
    assert cli("alerts", "silences", "p").stdout == ""
    cli("alerts", "silence", "p", "--for", "2h", code=1)  # a whole project needs a reason

    refused = cli(
        "alerts", "channel", "add", "p", "hook", "--kind", "webhook",
        "--url", "http://169.254.169.254/", code=1,
    )  # fmt: skip
    assert "link-local" in refused.stderr
    assert "AUDITOR_ALLOW_PRIVATE_TARGETS" in refused.stderr
    # Private networks are the operator's setting, for the CLI as for the API.
    monkeypatch.setenv("AUDITOR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")
    get_settings.cache_clear()
    made = cli(
        "alerts", "channel", "add", "p", "hook", "--kind", "webhook",
        "--url", "http://127.0.0.1:9/hook",
    ).stdout  # fmt: skip
    assert "signing secret (shown once): " in made
    secret = made.split("shown once): ")[1].strip()
    channels = cli("alerts", "channel", "list", "p").stdout
    assert "hook" in channels and "127.0.0.1:9" in channels and secret not in channels
    cli("alerts", "status", "nope", code=1)


def test_silences_end_now_or_are_cancelled_before_they_start(cli, uow, project):
    from datetime import UTC, datetime

    from auditor.services.alerts.silences import add_silence, list_silences

    now = datetime.now(UTC)
    add_silence(uow, "p", starts_at=now + HOUR, ends_at=now + 2 * HOUR, reason="later")
    add_silence(uow, "p", starts_at=now - HOUR, ends_at=now + 2 * HOUR, reason="running")
    cli("alerts", "unsilence", "p", "1")
    cli("alerts", "unsilence", "p", "2")
    cli("alerts", "unsilence", "p", "1", code=1)  # cancelled: gone
    kept = list_silences(uow, "p", include_ended=True)
    assert [(v.id, v.reason) for v in kept] == [(2, "running")]  # ended, kept on record
    assert kept[0].ends_at <= datetime.now(UTC)


def test_rules_for_metrics_where_higher_is_worse(cli, project):
    cli(
        "alerts", "add", "p", "--metric", "random_choice", "--subject", "every_rater",
        "--above", "0.3", "--name", "rc",
    )  # fmt: skip
    cli(
        "alerts", "add", "p", "--metric", "random_choice", "--subject", "every_rater",
        "--confidently-above", "0.4", "--name", "rc-sure",
    )  # fmt: skip
    listed = cli("alerts", "list", "p").stdout
    assert "p:rc  random_choice every_rater cumulative: above 0.3" in listed
    assert "p:rc-sure  random_choice every_rater cumulative: confidently_above 0.4" in listed
    both = cli("alerts", "add", "p", "--metric", "rho", "--above", "1", "--below", "0", code=2)
    assert "exactly one condition" in both.stderr


def test_channel_settings_by_set_and_shorthands_update_and_errors_name_options(
    cli, uow, project, monkeypatch
):
    monkeypatch.setenv("AUDITOR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")
    get_settings.cache_clear()
    # a shorthand the kind does not take: the error names the option typed, then the setting
    wrong = cli("alerts", "channel", "add", "p", "l", "--kind", "log", "--smtp-host", "x", code=1)
    assert "--smtp-host: a log channel does not take 'email_host'" in wrong.stderr
    zero = cli(
        "alerts", "channel", "add", "p", "m", "--kind", "email", "--smtp-host", "127.0.0.1",
        "--from", "a@x.org", "--to", "b@x.org", "--smtp-port", "0", code=1,
    )  # fmt: skip
    assert "--smtp-port: " in zero.stderr and "email_port must be 1 to 65535" in zero.stderr
    text_port = cli(
        "alerts", "channel", "add", "p", "m", "--kind", "email", "--set", "email_port=abc", code=1
    )
    assert "--set email_port: email_port must be an integer" in text_port.stderr
    assert (
        "needs url" in cli("alerts", "channel", "add", "p", "h", "--kind", "webhook", code=1).stderr
    )

    cli(
        "alerts", "channel", "add", "p", "mail", "--kind", "email",
        "--set", "email_host=127.0.0.1", "--set", "email_from=a@x.org",
        "--set", "email_to=b@x.org,c@x.org", "--set", "email_port=2525",
        "--starttls", "--username", "u", "--password", "first",
    )  # fmt: skip
    listed = cli("alerts", "channel", "list", "p").stdout
    assert "email_port=2525" in listed and "email_to=b@x.org,c@x.org" in listed
    assert "first" not in listed and "password" not in listed
    cli("alerts", "add", "p", "--metric", "rho", "--below", "0.5", "--channel", "mail")

    updated = cli("alerts", "channel", "update", "p", "mail", "--set", "password=second").stdout
    assert "updated email channel mail" in updated and "second" not in updated
    with uow:
        stored = uow.alerts.find_channel(project, "mail")
    assert stored is not None and stored.config["password"] == "second"
    assert stored.config["email_port"] == 2525 and stored.config["username"] == "u"
    bad = cli("alerts", "channel", "update", "p", "mail", "--set", "starttls=maybe", code=1)
    assert "--set starttls: starttls must be true or false" in bad.stderr
    cli("alerts", "channel", "update", "p", "nope", "--set", "x=1", code=1)
    cli("alerts", "channel", "update", "p", "mail", code=2)  # nothing to change


def test_rules_with_margin_z_and_rater_change(cli, project):
    """Issue 21: the guards and the change detector from the command line."""
    cli(
        "alerts", "add", "p", "--metric", "kappa_s", "--not-confidently-above", "0.667",
        "--margin", "0.05", "--name", "known",
    )  # fmt: skip
    cli(
        "alerts", "add", "p", "--metric", "self_agreement", "--subject", "every_rater",
        "--scope", "7d", "--drop", "0.15", "--lookback", "7d", "--z", "3", "--name", "tested",
    )  # fmt: skip
    cli(
        "alerts", "add", "p", "--metric", "reliability", "--subject", "every_rater",
        "--rater-change", "16", "--name", "change",
    )  # fmt: skip
    listed = cli("alerts", "list", "p").stdout
    assert "not_confidently_above 0.667 (margin 0.05)" in listed
    assert "drop > 0.15 vs 7d ago and z > 3" in listed
    assert "p:change  reliability every_rater cumulative: rater_change 16" in listed
    wrong = cli("alerts", "add", "p", "--metric", "kappa_s", "--below", "0.5", "--z", "3", code=1)
    assert "z" in wrong.stderr
