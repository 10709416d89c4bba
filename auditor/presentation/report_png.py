"""The report's figures as PNG files (matplotlib, headless Agg backend): the same history
charts, the rater self-agreement lines and the Cohen heatmap, for slides and documents."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: files only

import matplotlib.pyplot as plt
import numpy as np

from auditor.charts import THRESHOLDS
from auditor.charts.scale import y_domain
from auditor.errors import Invalid
from auditor.presentation.figures import has_thresholds, scope_color, scope_title, value_bounds
from auditor.services.queries.dashboard import MetricHistory, ProjectDetail

DPI = 110


def _history_png(history: MetricHistory, path: Path) -> None:
    figure, axes = plt.subplots(figsize=(7.5, 3.2), dpi=DPI)
    for index, series in enumerate(history.series):
        color = scope_color(index)
        times = [p.as_of for p in series.points]
        values = np.array([np.nan if p.value is None else p.value for p in series.points])
        low = np.array([np.nan if p.ci_low is None else p.ci_low for p in series.points])
        high = np.array([np.nan if p.ci_high is None else p.ci_high for p in series.points])
        label = f"{scope_title(series.scope)} ({len(series.points)} snapshots)"
        # NaN (undefined) breaks the line, as the gap does in the SVG charts.
        axes.plot(times, values, marker="o", markersize=3, color=color, label=label,
                  linestyle="-" if index == 0 else "--")  # fmt: skip
        axes.fill_between(times, low, high, color=color, alpha=0.15, linewidth=0)
    drawn = [v for s in history.series for p in s.points if p.value is not None
             for v in (p.value, p.ci_low, p.ci_high) if v is not None]  # fmt: skip
    references = [value for value, _ in THRESHOLDS] if has_thresholds(history.metric) else []
    # the same range as the SVG chart
    low, high, shown = y_domain(drawn, references, value_bounds(history.metric))
    for value, text in THRESHOLDS:
        if value in shown:
            axes.axhline(value, color="#b22222", linestyle=":", linewidth=1)
            # labelled beside the plot, as in the SVG chart, where no data point can cover it
            axes.annotate(text, (1.0, value), xycoords=("axes fraction", "data"),
                          xytext=(4, 0), textcoords="offset points", ha="left", va="center",
                          fontsize=8, color="#b22222", annotation_clip=False)  # fmt: skip
    axes.set_title(history.title, fontsize=11)
    axes.set_ylim(low, high)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower left")
    figure.autofmt_xdate()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _heatmap_png(detail: ProjectDetail, path: Path) -> None:
    labels = list(detail.pair_labels)
    index = {name: i for i, name in enumerate(labels)}
    matrix = np.full((len(labels), len(labels)), np.nan)
    for pair in detail.pairs:
        value = pair.kappa.get("value")
        if value is not None:
            i, j = index[pair.rater_a], index[pair.rater_b]
            matrix[i, j] = matrix[j, i] = value
    size = 1.2 + 0.45 * len(labels)
    figure, axes = plt.subplots(figsize=(size + 1.2, size), dpi=DPI)
    image = axes.imshow(matrix, vmin=0.0, vmax=1.0, cmap="YlGn")
    axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
    axes.set_yticks(range(len(labels)), labels, fontsize=8)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if not np.isnan(matrix[i, j]):
                axes.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=7,
                          color="white" if matrix[i, j] > 0.75 else "#222")  # fmt: skip
    figure.colorbar(image, ax=axes, label="Cohen's kappa")
    axes.set_title("Pairwise Cohen's kappa (cumulative)", fontsize=11)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def write_pngs(detail: ProjectDetail, directory: Path) -> list[Path]:
    """One PNG per history chart and the heatmap, in ``directory`` (created if missing).
    A project without snapshots has no figure: that is an error naming the project."""
    if detail.latest is None:
        slug = detail.card.slug
        raise Invalid(f"project {slug!r} has no snapshot yet, so there is nothing to plot")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for history in detail.charts:
        path = directory / f"{history.metric}.png"
        _history_png(history, path)
        written.append(path)
    if detail.pairs:
        path = directory / "cohen_heatmap.png"
        _heatmap_png(detail, path)
        written.append(path)
    return written
