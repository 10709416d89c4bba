"""``auditor stats FILE``: the one-shot command and its public JSON shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app

MEASURE_KEYS = {"value", "ci_low", "ci_high", "ci_reason", "n", "band", "reason"}
RATER_MEASURES = ("self_agreement", "self_kappa", "reliability", "random_choice", "s_vs_group")
PROJECT_KEYS = {
    "observed_agreement",
    "kappa_s",
    "fleiss_kappa",
    "krippendorff_alpha",
    "rho",
    "mean_self_agreement",
    "expected_agreement",
    "repeatability",
    "rater_effect",
    # issue 24: other chance models and the reading of a coefficient, on every scale
    "ac1",
    "bp",
    "prevalence_index",
    "bias_index",
}
CATEGORY_KEYS = {"category_share", "specific_agreement"}
ORDINAL_KEYS = {"kappa_s_w", "fleiss_kappa_w", "ac2", "bp_w", "alpha_ordinal", "alpha_interval"}
CSV = """item,rater,label,session,labeled_at,rater_kind
1,ann,yes,s1,2026-01-01T10:00:00Z,human
1,bob,yes,s1,2026-01-01T10:01:00Z,human
1,cat,no,s1,2026-01-01T10:01:30Z,human
1,clf,no,s1,2026-01-01T10:02:00Z,model
2,ann,no,s1,2026-01-02T10:00:00Z,human
2,bob,yes,s1,2026-01-02T10:00:00Z,human
2,cat,no,s1,2026-01-02T10:00:00Z,human
2,clf,no,s1,2026-01-02T10:00:00Z,model
2,ann,yes,s2,2026-01-03T10:00:00Z,human
3,ann,yes,s2,2026-01-03T10:00:00Z,human
3,bob,yes,s2,2026-01-03T11:00:00Z,human
3,clf,yes,s2,2026-01-03T11:00:00Z,model
4,bob,no,s2,2026-01-04T11:00:00Z,human
4,cat,no,s2,2026-01-04T11:00:00Z,human
4,ann,no,s2,2026-01-04T11:00:00Z,human
"""


@pytest.fixture
def label_file(tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    return path


def check_shape(doc: dict) -> None:
    assert set(doc) == {
        "n_labels", "n_items", "n_raters", "n_pairable_items", "categories", "scale", "weights",
        "measures", "raters", "models", "pairwise_cohen",
    }  # fmt: skip
    ordinal = doc["scale"] == "ordinal"
    assert set(doc["measures"]) == PROJECT_KEYS | CATEGORY_KEYS | (
        ORDINAL_KEYS if ordinal else set()
    )
    for name, m in doc["measures"].items():
        if name in CATEGORY_KEYS:
            assert list(m) == doc["categories"]
            assert all(set(per) == MEASURE_KEYS for per in m.values())
        else:
            assert set(m) == MEASURE_KEYS
    rater_measures = (*RATER_MEASURES, "grade_bias") if ordinal else RATER_MEASURES
    for rater in doc["raters"].values():
        assert set(rater) == {*rater_measures, "n_repeated_items", "confusion", "confusion_n"}
        assert isinstance(rater["n_repeated_items"], int)
        for key in rater_measures:
            assert set(rater[key]) == MEASURE_KEYS
        k = len(doc["categories"])
        assert len(rater["confusion"]) == k and all(len(row) == k for row in rater["confusion"])
    for model in doc["models"].values():
        assert set(model) == {"s", "kappa_va"}
        assert set(model["s"]) == set(model["kappa_va"]) == MEASURE_KEYS
    for pair in doc["pairwise_cohen"]:
        assert set(pair) == {"rater_a", "rater_b", "kappa", "n_items"} | (
            {"cohen_w"} if ordinal else set()
        )
        assert set(pair["kappa"]) == MEASURE_KEYS


def test_json_has_exactly_the_public_shape(label_file: Path) -> None:
    result = CliRunner().invoke(app, ["stats", str(label_file), "--json", "--ci", "bootstrap"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    check_shape(doc)
    assert (doc["n_labels"], doc["n_items"], doc["n_raters"]) == (15, 4, 4)
    assert doc["n_pairable_items"] == 4
    assert doc["categories"] == ["no", "yes"]
    assert set(doc["raters"]) == {"ann", "bob", "cat"}
    assert set(doc["models"]) == {"clf"}
    assert doc["raters"]["ann"]["n_repeated_items"] == 1
    # ann saw item 2 twice (no, yes): no agreeing pair of looks
    assert doc["raters"]["ann"]["self_agreement"]["value"] == 0.0
    # collapse=first: ann's first look at item 2 is "no", so item 2 is no/yes/no
    assert doc["measures"]["observed_agreement"]["value"] == pytest.approx(
        (1 / 3 + 1 / 3 + 1 + 1) / 4
    )
    pairs = {(p["rater_a"], p["rater_b"]): p["n_items"] for p in doc["pairwise_cohen"]}
    assert pairs == {("ann", "bob"): 4, ("ann", "cat"): 3, ("bob", "cat"): 3}


def test_collapse_latest_and_categories_option(label_file: Path) -> None:
    result = CliRunner().invoke(
        app, ["stats", str(label_file), "--json", "--collapse", "latest", "--categories", "yes,no"]
    )
    doc = json.loads(result.stdout)
    assert doc["categories"] == ["yes", "no"]
    # latest: ann says "yes" on item 2, so item 2 is yes/yes/no
    assert doc["measures"]["observed_agreement"]["value"] == pytest.approx(
        (1 / 3 + 1 / 3 + 1 + 1) / 4
    )


def test_readable_output_has_bands(label_file: Path) -> None:
    result = CliRunner().invoke(app, ["stats", str(label_file)])
    assert result.exit_code == 0
    assert "kappa_s" in result.output and "Cohen's kappa" in result.output
    assert "jackknife 95%" in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("item,rater\n1,a\n", "missing column(s) label"),
        ("item,rater,label\n1,a,x\n2,,y\n", "labels.csv, row 3, field 'rater': is empty"),
        ("item,rater,label,labeled_at\n1,a,x,yesterday\n", "field 'labeled_at'"),
        (
            "item,rater,label,rater_kind\n1,a,x,robot\n",
            "row 2, field 'rater_kind': must be 'human' or 'model', got 'robot'",
        ),
        (
            "item,rater,label,rater_kind\n1,a,x,human\n2,a,x,model\n",
            "row 3, field 'rater_kind': rater 'a' is 'model' here but 'human' in row 2",
        ),
    ],
)
def test_bad_files_fail_with_the_line_and_field(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(content)
    result = CliRunner().invoke(app, ["stats", str(path)])
    assert result.exit_code == 1
    assert message in result.output


def test_label_outside_categories(label_file: Path) -> None:
    result = CliRunner().invoke(app, ["stats", str(label_file), "--categories", "no,maybe"])
    assert result.exit_code == 1
    # every bad row is named, not only the first one
    for row in (2, 3, 7, 10, 11, 12, 13):
        assert (
            f"labels.csv, row {row}, field 'label': 'yes' is not one of no, maybe" in result.output
        )
    assert "labels.csv: 7 bad row value(s)" in result.output


def test_the_installed_command_runs_as_a_process(label_file: Path) -> None:
    auditor = Path(sys.executable).parent / "auditor"
    done = subprocess.run(
        [str(auditor), "stats", str(label_file), "--json", "--ci", "none"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    check_shape(doc)
    assert doc["measures"]["kappa_s"]["ci_low"] is None


def test_the_process_leaves_with_its_status_and_all_its_output(tmp_path: Path) -> None:
    # `auditor stats` skips the interpreter's teardown (os._exit): the status and every
    # line written must still come out.
    auditor = Path(sys.executable).parent / "auditor"
    rows = [f"i{i},r{j},{'ab'[(i * j) % 2]}" for i in range(300) for j in range(12)]
    good = tmp_path / "many.csv"
    good.write_text("item,rater,label\n" + "\n".join(rows) + "\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,label\ni1,ann,a\ni1,bob,zz\n")
    cases = [(good, 0, ""), (bad, 1, "row 3, field 'label'"), (tmp_path / "none.csv", 2, "")]
    for path, status, error in cases:
        done = subprocess.run(
            [str(auditor), "stats", str(path), "--categories", "a,b"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == status, done.stderr
        assert error in done.stderr
    done = subprocess.run(
        [str(auditor), "stats", str(good), "--json"], capture_output=True, timeout=120
    )
    assert len(json.loads(done.stdout)["pairwise_cohen"]) == 12 * 11 // 2
    if Path("/dev/full").exists():  # output that cannot be written: one line, status 1
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [str(auditor), "stats", str(good), "--categories", "a,b"],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
            )
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            "error: No space left on device writing the output"
        ]


def test_a_file_with_one_label_suggests_the_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "one.csv"
    path.write_text("item,rater,label\n1,a,x\n1,b,x\n2,a,x\n2,b,x\n", encoding="utf-8")
    refused = CliRunner().invoke(app, ["stats", str(path)])
    assert refused.exit_code == 1 and "--categories" in refused.output
    measured = CliRunner().invoke(app, ["stats", str(path), "--categories", "x,y", "--json"])
    kappa_s = json.loads(measured.stdout)["measures"]["kappa_s"]
    assert kappa_s["value"] is None and "single category" in kappa_s["reason"]


def test_duplicate_rows_are_one_look_and_the_summary_says_so(tmp_path: Path) -> None:
    # ann's item-2 look in session s1 is sent twice with the same time: one look, not a repeat;
    # the row without labeled_at is a look of its own (nothing tells a resend from a look)
    extra = "2,ann,no,s1,2026-01-02T10:00:00Z,human\n3,cat,yes,,,human\n3,cat,yes,,,human\n"
    path = tmp_path / "dups.csv"
    path.write_text(CSV + extra)
    shown = CliRunner().invoke(app, ["stats", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "duplicates dropped: 1 row(s)" in shown.output
    doc = json.loads(CliRunner().invoke(app, ["stats", str(path), "--json"]).stdout)
    assert doc["n_labels"] == 15 + 2
    assert doc["raters"]["ann"]["n_repeated_items"] == 1  # still only item 2's second session
    assert doc["raters"]["cat"]["n_repeated_items"] == 1


def test_rater_model_option_and_table_columns(label_file: Path) -> None:
    shown = CliRunner().invoke(app, ["stats", str(label_file), "--rater-model", "max_entropy"])
    assert shown.exit_code == 0, shown.output
    assert "rater model: max_entropy" in shown.output
    assert "self_kappa | reliability | random_choice" in shown.output
    bad = CliRunner().invoke(app, ["stats", str(label_file), "--rater-model", "guess"])
    assert bad.exit_code != 0


def test_a_bootstrap_that_cannot_run_says_why_in_the_table(tmp_path: Path) -> None:
    # 120 raters at 3 per item: too many rater-set patterns for kappa_S's bootstrap
    import numpy as np

    rng = np.random.default_rng(0)
    lines = ["item,rater,label"]
    for u in range(1500):
        for r in rng.choice(120, 3, replace=False):
            lines.append(f"i{u},r{r},{'yes' if rng.random() < 0.6 else 'no'}")
    path = tmp_path / "many.csv"
    path.write_text("\n".join(lines) + "\n")
    shown = CliRunner().invoke(app, ["stats", str(path), "--ci", "bootstrap", "--resamples", "10"])
    assert shown.exit_code == 0, shown.output
    kappa = next(line for line in shown.output.splitlines() if line.startswith("kappa_s "))
    assert "[no interval: too many rater-set patterns to bootstrap" in kappa
