"""``auditor stats FILE``: every measure of one label file, no database.

FILE is a label file in the long format of ``auditor import`` (CSV or JSONL: ``item, rater,
label``; optional ``session, labeled_at, rater_kind, key``), read by the same readers and row
checks (``auditor.ingestion.arrays``), so both commands accept and refuse the same files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import typer

from auditor.cli._common import fail
from auditor.cli._read_options import (
    BATCH_SIZE,
    DELIMITER,
    FORMAT,
    FROM_NAME,
    ITEM_FIELD,
    MAP,
    STRICT,
    notices,
    read_options,
)
from auditor.cli._settings import setting_option
from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    LabelArrays,
    ProjectSettings,
    RaterModel,
    RhoMode,
    RhoUnrated,
    Scale,
    Weights,
)
from auditor.ingestion.arrays import BATCH_SIZE as DEFAULT_BATCH_SIZE
from auditor.ingestion.arrays import read_with_dropped
from auditor.ingestion.errors import IngestRejected
from auditor.ingestion.readers import LabelFileReader
from auditor.stats import Measure, MeasureSet, compute_measures, paradox
from auditor.stats.export import MODEL_STATS, RATER_STATS, measure_set_to_dict
from auditor.stats.results import CATEGORY_MEASURES


def rejection_message(
    path: Path, rejection: IngestRejected, where: Callable[[int], str] | None = None
) -> str:
    """Every reported bad row as ``FILE, row N, field 'F': reason``, then the total
    (``where`` names a row's place in a document)."""
    lines = [f"{path.name}, {error.located(where)}" for error in rejection.errors]
    if rejection.total > len(rejection.errors):
        lines.append(f"... and {rejection.total - len(rejection.errors)} more")
    lines.append(f"{path.name}: {rejection.total} bad row value(s)")
    return "\n".join(lines)


def _category_names(option: str | None) -> list[str] | None:
    """--categories: a file with one name per line (so a name may hold a comma), else a
    comma-separated list."""
    if option is None:
        return None
    path = Path(option)
    if path.is_file():
        lines = path.read_text(encoding="utf-8-sig").splitlines()
        return [line.strip() for line in lines if line.strip()]
    return [c.strip() for c in option.split(",")]


def vocabulary_notice(arrays: LabelArrays) -> str:
    """The vocabulary inferred from the file, with counts: a typo ('kat') or a case slip
    ('Dog') shows up as a category of its own."""
    counts = np.bincount(arrays.category, minlength=len(arrays.category_names))
    listed = ", ".join(
        f"{name} {int(n)}" for name, n in zip(arrays.category_names, counts, strict=True)
    )
    return f"categories inferred from the file (fix them with --categories): {listed}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(m: Measure) -> str:
    if m.value is None:
        return f"- ({m.reason})"
    interval = f" [{_number(m.ci_low)}, {_number(m.ci_high)}]" if m.ci_low is not None else ""
    if m.ci_low is None and m.ci_reason:
        interval = f" [no interval: {m.ci_reason.removeprefix('no interval: ')}]"
    band = f" {m.band}" if m.band else ""
    return f"{m.value:.3f}{interval}{band}"


def _confusion(ms: MeasureSet) -> list[str]:
    """Each rater's row-normalised confusion against the others, one line per rater."""
    lines = ["", "confusion against the others (when she says c, the others say: row shares)"]
    for r in ms.raters:
        rows = []
        for category, row, n in zip(ms.categories, r.confusion, r.confusion_n, strict=True):
            cells = " ".join("  -  " if v is None else f"{v:.2f}" for v in row)
            rows.append(f"{category}({n}): {cells}")
        lines.append(f"{r.rater:<16}" + " | ".join(rows))
    return lines


def render(ms: MeasureSet, dropped: int = 0) -> str:
    """Readable tables: project measures, the paradox sentence, categories, raters, models,
    pairwise Cohen."""
    lines = [
        f"labels {ms.n_labels}  items {ms.n_items}  raters {ms.n_raters}  "
        f"pairable items {ms.n_pairable_items}  categories {', '.join(ms.categories)}",
        f"intervals: {ms.interval_method.value}"
        + (f" {ms.interval_level:.0%}" if ms.interval_method != IntervalMethod.NONE else "")
        + (f", seed {ms.seed}" if ms.seed is not None else "")
        + f"; rater model: {ms.rater_model.value}"
        + f"; scale: {ms.scale.value}"
        + (f" ({ms.weights.value} weights)" if ms.weights is not None else ""),
    ]
    if dropped:
        lines.append(
            f"duplicates dropped: {dropped} row(s) equal to an earlier one in item, rater, "
            "label, session and labeled_at (one look sent twice, not a repeat)"
        )
    lines += ["", f"{'measure':<22}{'n':>8}  value [interval] band"]
    lines += [f"{name:<22}{m.n:>8}  {_cell(m)}" for name, m in ms.measures.items()]
    said = paradox.sentence(measure_set_to_dict(ms))
    if said:
        lines += ["", f"kappa paradox: {said}"]
    if ms.by_category:
        lines += ["", f"{'category':<22}" + " | ".join(CATEGORY_MEASURES)]
        lines += [
            f"{category:<22}"
            + " | ".join(_cell(ms.by_category[name][category]) for name in CATEGORY_MEASURES)
            for category in ms.categories
        ]
    if ms.raters:
        shown = [n for n in RATER_STATS if getattr(ms.raters[0], n) is not None]
        lines += ["", f"{'rater':<16}{'repeats':>8}  " + " | ".join(shown)]
        lines += [
            f"{r.rater:<16}{r.n_repeated_items:>8}  "
            + " | ".join(_cell(getattr(r, name)) for name in shown)
            for r in ms.raters
        ]
        if ms.raters[0].confusion:
            lines += _confusion(ms)
    if ms.models:
        lines += ["", f"{'model':<16}  " + " | ".join(MODEL_STATS)]
        lines += [
            f"{m.rater:<16}  " + " | ".join(_cell(getattr(m, name)) for name in MODEL_STATS)
            for m in ms.models
        ]
    if ms.pairwise_cohen:
        weighted = ms.pairwise_cohen[0].cohen_w is not None
        lines += [
            "",
            f"{'rater a':<16}{'rater b':<16}{'items':>8}  Cohen's kappa"
            + (" | weighted (cohen_w)" if weighted else ""),
        ]
        lines += [
            f"{p.rater_a:<16}{p.rater_b:<16}{p.n_items:>8}  {_cell(p.kappa)}"
            + (f" | {_cell(p.cohen_w)}" if p.cohen_w is not None else "")
            for p in ms.pairwise_cohen
        ]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        file: Path = typer.Argument(
            ..., help="Label file (.csv, .jsonl, a tool's export: see --format)"
        ),
        categories: str | None = typer.Option(
            None,
            help="Ordered categories, e.g. a,b,c, or a file with one name per line "
            "(default: the labels seen, listed with their counts)",
        ),
        file_format: str | None = FORMAT,
        delimiter: str | None = DELIMITER,
        mapping: str | None = MAP,
        strict: bool = STRICT,
        item_field: str | None = ITEM_FIELD,
        from_name: str | None = FROM_NAME,
        batch_size: int | None = BATCH_SIZE,
        collapse: CollapsePolicy = setting_option("collapse", CollapsePolicy.FIRST),
        rho_mode: RhoMode = setting_option("rho_mode", RhoMode.APPROXIMATE),
        rho_unrated: RhoUnrated = setting_option("rho_unrated", RhoUnrated.POOL),
        rater_model: RaterModel = setting_option(
            "rater_model",
            RaterModel.MOMENTS,
            "How x is estimated: moments, or the paper's max_entropy",
        ),
        ci: IntervalMethod = setting_option("interval_method", IntervalMethod.JACKKNIFE),
        level: float = setting_option("interval_level", 0.95, "Interval level"),
        resamples: int = setting_option("bootstrap_resamples", 1000, "Bootstrap resamples"),
        seed: int | None = typer.Option(
            None, help="Bootstrap seed (default: fixed); a snapshot's seed reproduces its intervals"
        ),
        scale: Scale = setting_option(
            "scale",
            Scale.NOMINAL,
            "ordinal: the categories' declared order (--categories) is the scale's order; "
            "adds the weighted coefficients, grade bias and weighted pairwise kappa",
        ),
        weights: Weights = setting_option(
            "weights", Weights.QUADRATIC, "Agreement weights of an ordinal scale"
        ),
        as_json: bool = typer.Option(False, "--json", help="The public JSON shape"),
    ) -> None:
        """Every agreement measure of one label file (no database)."""
        if not file.is_file():
            fail(f"{file}: no such file", code=2)
        options = read_options(delimiter, mapping, strict, item_field, from_name)
        reader = LabelFileReader(file, batch_size or DEFAULT_BATCH_SIZE, file_format, options)
        try:
            names = _category_names(categories)
            settings = ProjectSettings(
                collapse=collapse,
                rho_mode=rho_mode,
                rho_unrated=rho_unrated,
                rater_model=rater_model,
                interval_method=ci,
                interval_level=level,
                bootstrap_resamples=resamples,
            )
            try:
                arrays, dropped = read_with_dropped(reader, names)
            finally:
                for line in notices(reader):
                    typer.echo(line, err=True)
            if names is None:
                typer.echo(vocabulary_notice(arrays), err=True)
                if scale == Scale.ORDINAL:
                    typer.echo(
                        "ordinal scale in the inferred order "
                        f"{' < '.join(arrays.category_names)}: give the scale's order "
                        "with --categories",
                        err=True,
                    )
            result = compute_measures(arrays, settings, seed=seed, scale=scale, weights=weights)
        except IngestRejected as rejection:
            fail(rejection_message(file, rejection, reader.where))
        except ValueError as error:  # the file's format, a setting, the vocabulary
            hint = ""
            if categories is None and "categories" in str(error):
                # The vocabulary defaults to the labels seen: a file that uses one category
                # needs the project's full vocabulary to be measured (and then reads undefined).
                hint = "; the file uses fewer than 2 labels: give the vocabulary with --categories"
            fail(f"{error}{hint}")
        if as_json:
            typer.echo(json.dumps(measure_set_to_dict(result), indent=2, allow_nan=False))
        else:
            typer.echo(render(result, dropped))
