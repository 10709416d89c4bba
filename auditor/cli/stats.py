"""``auditor stats FILE``: every measure of one label file, no database.

FILE is the long CSV of the import (``item, rater, label``; optional ``session, labeled_at,
rater_kind``). The reader here is deliberately small (stdlib ``csv``); the ingestion package
owns the full importers.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import typer

from auditor.cli._common import fail
from auditor.domain import (
    CollapsePolicy,
    IntervalMethod,
    LabelArrays,
    ProjectSettings,
    RhoMode,
    RhoUnrated,
)
from auditor.stats import Measure, MeasureSet, compute_measures
from auditor.stats.export import measure_set_to_dict

REQUIRED = ("item", "rater", "label")


def _micros(text: str, where: str) -> int:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{where}, field 'labeled_at': {text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1_000_000)


def read_label_csv(path: Path, categories: list[str] | None) -> LabelArrays:
    """Read the long CSV into ``LabelArrays``; ``ValueError`` names the line and the field."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip() for h in reader.fieldnames or []]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        reader.fieldnames = header
        items: dict[str, int] = {}
        raters: dict[str, int] = {}
        kinds: dict[str, str] = {}
        rows: list[tuple[int, int, str, int]] = []
        for line, row in enumerate(reader, start=2):  # a loop over file rows: this is I/O
            where = f"{path}:{line}"
            values = {name: (row.get(name) or "").strip() for name in header}
            for name in REQUIRED:
                if not values[name]:
                    raise ValueError(f"{where}, field '{name}': empty")
            kind = values.get("rater_kind") or "human"
            if kind not in ("human", "model"):
                raise ValueError(f"{where}, field 'rater_kind': {kind!r} is not human or model")
            rater = values["rater"]
            if kinds.setdefault(rater, kind) != kind:
                raise ValueError(
                    f"{where}, field 'rater_kind': rater {rater!r} was {kinds[rater]} before"
                )
            order = _micros(values["labeled_at"], where) if values.get("labeled_at") else line
            item = items.setdefault(values["item"], len(items))
            rows.append((item, raters.setdefault(rater, len(raters)), values["label"], order))
    names = categories if categories is not None else sorted({r[2] for r in rows})
    index = {name: i for i, name in enumerate(names)}
    for line, (_, _, label, _) in enumerate(rows, start=2):
        if label not in index:
            raise ValueError(
                f"{path}:{line}, field 'label': {label!r} is not one of {', '.join(names)}"
            )
    column = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return LabelArrays(
        item=np.asarray(column[0], dtype=np.int64),
        rater=np.asarray(column[1], dtype=np.int64),
        category=np.asarray([index[label] for label in column[2]], dtype=np.int64),
        order=np.asarray(column[3], dtype=np.int64),
        rater_is_model=np.asarray([kinds[name] == "model" for name in raters], dtype=bool),
        category_names=tuple(names),
        rater_names=tuple(raters),
        item_names=tuple(items),
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(m: Measure) -> str:
    if m.value is None:
        return f"- ({m.reason})"
    interval = f" [{_number(m.ci_low)}, {_number(m.ci_high)}]" if m.ci_low is not None else ""
    band = f" {m.band}" if m.band else ""
    return f"{m.value:.3f}{interval}{band}"


def render(ms: MeasureSet) -> str:
    """Readable tables: project measures, raters, models, pairwise Cohen."""
    lines = [
        f"labels {ms.n_labels}  items {ms.n_items}  raters {ms.n_raters}  "
        f"pairable items {ms.n_pairable_items}  categories {', '.join(ms.categories)}",
        f"intervals: {ms.interval_method.value}"
        + (f" {ms.interval_level:.0%}" if ms.interval_method != IntervalMethod.NONE else "")
        + (f", seed {ms.seed}" if ms.seed is not None else ""),
        "",
        f"{'measure':<22}{'n':>8}  value [interval] band",
    ]
    lines += [f"{name:<22}{m.n:>8}  {_cell(m)}" for name, m in ms.measures.items()]
    if ms.raters:
        lines += ["", f"{'rater':<16}{'repeats':>8}  self_agreement | random_choice | s_vs_group"]
        lines += [
            f"{r.rater:<16}{r.n_repeated_items:>8}  {_cell(r.self_agreement)} | "
            f"{_cell(r.random_choice)} | {_cell(r.s_vs_group)}"
            for r in ms.raters
        ]
    if ms.models:
        lines += ["", f"{'model':<16}  S | kappa_VA"]
        lines += [f"{m.rater:<16}  {_cell(m.s)} | {_cell(m.kappa_va)}" for m in ms.models]
    if ms.pairwise_cohen:
        lines += ["", f"{'rater a':<16}{'rater b':<16}{'items':>8}  Cohen's kappa"]
        lines += [
            f"{p.rater_a:<16}{p.rater_b:<16}{p.n_items:>8}  {_cell(p.kappa)}"
            for p in ms.pairwise_cohen
        ]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        file: Path = typer.Argument(..., help="Long CSV: item, rater, label[, labeled_at, ...]"),
        categories: str | None = typer.Option(None, help="Ordered categories, e.g. a,b,c"),
        collapse: CollapsePolicy = typer.Option(CollapsePolicy.FIRST),
        rho_mode: RhoMode = typer.Option(RhoMode.APPROXIMATE),
        rho_unrated: RhoUnrated = typer.Option(RhoUnrated.POOL),
        ci: IntervalMethod = typer.Option(IntervalMethod.JACKKNIFE),
        level: float = typer.Option(0.95, help="Interval level"),
        resamples: int = typer.Option(1000, help="Bootstrap resamples"),
        seed: int | None = typer.Option(None, help="Bootstrap seed (default: fixed)"),
        as_json: bool = typer.Option(False, "--json", help="The public JSON shape"),
    ) -> None:
        """Every agreement measure of one label file (no database)."""
        if not file.is_file():
            fail(f"{file}: no such file", code=2)
        try:
            names = None if categories is None else [c.strip() for c in categories.split(",")]
            settings = ProjectSettings(
                collapse=collapse,
                rho_mode=rho_mode,
                rho_unrated=rho_unrated,
                interval_method=ci,
                interval_level=level,
                bootstrap_resamples=resamples,
            )
            result = compute_measures(read_label_csv(file, names), settings, seed=seed)
        except ValueError as error:
            fail(str(error))
        if as_json:
            typer.echo(json.dumps(measure_set_to_dict(result), indent=2, allow_nan=False))
        else:
            typer.echo(render(result))
