"""A snapshot's recorded seed reproduces its intervals: ``auditor stats --seed S`` on the
snapshot's rows, shuffled, gives exactly the snapshot's values and intervals (issue 24 item 6;
before, a file whose items were not in sorted order read other bootstrap intervals)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from auditor.cli import app
from auditor.services.ingest.labels import ingest_labels
from auditor.services.projects.projects import create_project
from auditor.services.queries.history import snapshot_view
from auditor.services.recompute.recompute import find_project_id, recompute_project

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
CATEGORIES = ["normal", "benign", "malignant"]


def _rows(seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(30):
        truth = int(rng.choice(3, p=[0.6, 0.3, 0.1]))
        for k, rater in enumerate(["zoe", "ann", "mia", "bob", "m1"]):
            looks = 2 if rng.random() < 0.25 and rater != "m1" else 1
            for look in range(looks):
                label = truth if rng.random() < 0.8 else int(rng.integers(3))
                rows.append(
                    {
                        "item": f"case-{(i * 7919) % 1000:03d}",
                        "rater": rater,
                        "label": CATEGORIES[label],
                        "labeled_at": T0 + timedelta(minutes=i + 60 * look, seconds=k),
                        "rater_kind": "model" if rater == "m1" else "human",
                    }
                )
    return rows


def _write(rows: list[dict], path: Path) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "labeled_at": row["labeled_at"].isoformat()})


def _keyed(doc: dict) -> dict:
    """Pairs keyed by their raters (the listing follows the order the input names raters)."""
    pairs = {}
    for p in doc["pairwise_cohen"]:
        pairs[frozenset((p["rater_a"], p["rater_b"]))] = {
            k: v for k, v in p.items() if k not in ("rater_a", "rater_b")
        }
    return {**doc, "pairwise_cohen": pairs}


def test_stats_with_the_snapshot_seed_reproduces_its_intervals(uow, tmp_path: Path) -> None:
    create_project(
        uow,
        "p",
        CATEGORIES,
        interval_method="bootstrap",
        bootstrap_resamples=200,
        windows_days=(7,),
    )
    rows = _rows(5)
    ingest_labels(uow, "p", rows)
    recompute_project(uow, find_project_id(uow, "p"), now=T0 + timedelta(days=1))
    view = snapshot_view(uow, "p")
    seed = view["snapshot"]["seed"]
    assert seed is not None
    snapshot = {k: v for k, v in view.items() if k != "snapshot"}
    assert snapshot["measures"]["kappa_s"]["ci_low"] is not None

    rng = np.random.default_rng(1)
    for shuffle in range(2):
        path = tmp_path / f"rows{shuffle}.csv"
        _write([rows[i] for i in rng.permutation(len(rows))], path)
        args = ["stats", str(path), "--json", "--ci", "bootstrap", "--resamples", "200"]
        args += ["--seed", str(seed), "--categories", ",".join(CATEGORIES)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert _keyed(json.loads(result.stdout)) == _keyed(snapshot)


def test_an_ordinal_project_snapshots_its_weighted_coefficients(uow) -> None:
    # the project settings scale/weights reach the recompute and the snapshot's metadata
    create_project(uow, "o", CATEGORIES, scale="ordinal", weights="linear", windows_days=())
    ingest_labels(uow, "o", _rows(6))
    recompute_project(uow, find_project_id(uow, "o"), now=T0 + timedelta(days=1))
    view = snapshot_view(uow, "o")
    assert view["snapshot"]["settings"]["scale"] == "ordinal"
    assert view["snapshot"]["settings"]["weights"] == "linear"
    assert (view["scale"], view["weights"]) == ("ordinal", "linear")
    for name in ("kappa_s_w", "fleiss_kappa_w", "ac2", "bp_w", "alpha_ordinal", "alpha_interval"):
        assert view["measures"][name]["value"] is not None, name
        assert view["measures"][name]["ci_low"] is not None, name
    assert all("grade_bias" in r for r in view["raters"].values())
    assert all("cohen_w" in p for p in view["pairwise_cohen"])
    from auditor.services.queries.history import metric_history

    assert len(metric_history(uow, "o", "kappa_s_w", scopes=["cumulative"])) == 1
    assert len(metric_history(uow, "o", "grade_bias", subject="rater:ann")) == 1
    assert len(metric_history(uow, "o", "cohen_w", subject="pair:zoe|ann")) == 1
