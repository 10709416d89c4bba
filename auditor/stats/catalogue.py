"""The metric catalogue: every metric a snapshot reports, declared once.

Each entry says what the metric is about (subject kinds), its range and band, whether higher
is better, and what it means. Read by alert rule validation (``auditor.alerting.rules``), the
dashboard (charts, threshold lines), the API's rater view, the CLI's help, and the docs (the
table in docs/alerts.md is ``markdown_table()``; a test keeps them equal).

Adding a per-rater metric: compute it in ``auditor.stats`` (it then reaches the snapshot's
``raters`` section and its metric points) and add one ``Metric`` here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

LANDIS_KOCH = "Landis-Koch"
KRIPPENDORFF = "Krippendorff"


@dataclass(frozen=True)
class Metric:
    """One metric.

    name : the metric point's name (``metric_points.metric``, the JSON key).
    subjects : the subject kinds it is reported for: project, rater, model, pair.
    description : one line for people (docs, help).
    low, high : its range; None where unbounded (counts) or not fixed.
    higher_is_better : True for agreement; False where a rise is bad (``random_choice``),
        None for counts that are neither (planned repeats).
    band : the interpretation scale of its value, or None.
    chance_corrected : an agreement coefficient with 0 at chance: Krippendorff's 0.667 and
        0.800 lines are drawn on its charts.
    chart : its position among its subject's charts on the dashboard; None: not charted.
    title : the chart's title.
    from_stats : computed by ``auditor.stats`` (the ``auditor stats --json`` sections); False
        for what the recompute adds (repeat coverage).
    label : its short name on the dashboard (cards, table columns) and in the CLI's tables;
        empty: ``name``.
    headline : its position among the project page's headline cards; None: no card.
    table : a computed per-rater or per-model metric is a column of the dashboard's rater or
        model table unless False.
    needs_repeats : undefined for a rater without repeated presentations (the rater table
        explains that once across these columns).
    ordinal : reported only on an ordinal scale (the weighted coefficients, grade bias).
    """

    name: str
    subjects: tuple[str, ...]
    description: str
    low: float | None = 0.0
    high: float | None = 1.0
    higher_is_better: bool | None = True
    band: str | None = None
    chance_corrected: bool = False
    chart: int | None = None
    title: str = ""
    from_stats: bool = True
    label: str = ""
    headline: int | None = None
    table: bool = True
    needs_repeats: bool = False
    ordinal: bool = False

    @property
    def short(self) -> str:
        return self.label or self.name


def _agreement(
    name: str,
    subjects: tuple[str, ...],
    description: str,
    band: str,
    chart: int | None = None,
    title: str = "",
    **extra: Any,
) -> Metric:
    """A chance-corrected agreement coefficient: at most 1, 0 at chance; its floor depends on
    the data (-1 for two raters, -1/(K-1) for some), so it is not fixed (None)."""
    return Metric(
        name, subjects, description, None, 1.0, True, band, True, chart, title, True, **extra
    )


def _count(name: str, description: str, higher_is_better: bool | None = None) -> Metric:
    """A count of repeats the recompute adds per rater (repeat coverage)."""
    return Metric(name, ("rater",), description, 0.0, None, higher_is_better, from_stats=False)


METRICS: tuple[Metric, ...] = (
    # The project measures, in the order of the public JSON contract.
    Metric(
        "observed_agreement",
        ("project",),
        "share of agreeing rater pairs per item; not chance-corrected",
    ),
    _agreement(
        "kappa_s",
        ("project",),
        "agreement of the fixed group beyond chance (Shah's kappa_S); the headline",
        LANDIS_KOCH,
        chart=1,
        title="kappa_S (fixed group)",
        label="kappa_S",
        headline=3,
    ),
    _agreement(
        "fleiss_kappa",
        ("project",),
        "Fleiss' kappa, chance from pooled shares; for comparison",
        LANDIS_KOCH,
        chart=3,
        title="Fleiss' kappa",
        label="Fleiss' kappa",
        headline=7,
    ),
    _agreement(
        "krippendorff_alpha",
        ("project",),
        "Krippendorff's alpha, nominal, missing data allowed",
        KRIPPENDORFF,
        chart=4,
        title="Krippendorff's alpha",
        label="Krippendorff's alpha",
        headline=8,
    ),
    _agreement(
        "rho",
        ("project",),
        "reliability-weighted agreement: pairs agreeing genuinely, not at random",
        KRIPPENDORFF,
        chart=2,
        title="rho (reliability-weighted agreement)",
        label="rho (reliability-weighted agreement)",
        headline=6,
    ),
    Metric(
        "mean_self_agreement",
        ("project",),
        "mean of the raters' self-agreement",
        label="mean self-agreement",
        headline=9,
    ),
    Metric(
        "expected_agreement",
        ("project",),
        "Brennan-Prediger's kappa under its Bashkansky-Marmor name kappa_BM: the value of bp "
        "(the key is kept for compatibility)",
        low=None,
        band=LANDIS_KOCH,
        label="kappa_BM (= bp)",
    ),
    Metric(
        "repeatability",
        ("project",),
        "within-rater part of disagreement, up to K/(K-1) for K categories (needs repeats)",
        high=None,
        higher_is_better=False,
    ),
    Metric(
        "rater_effect",
        ("project",),
        "between-rater part of disagreement (needs repeats)",
        low=None,
        high=None,
        higher_is_better=False,
    ),
    # Other chance models (docs/measures.md, "Other chance models").
    _agreement(
        "ac1",
        ("project",),
        "Gwet's AC1: chance from the shares' spread, stable when one category dominates",
        LANDIS_KOCH,
        label="AC1",
        headline=4,
    ),
    _agreement(
        "bp",
        ("project",),
        "Brennan-Prediger's kappa, chance 1/K (PABAK for two categories; = kappa_BM)",
        LANDIS_KOCH,
        label="PABAK (bp)",
        headline=5,
    ),
    # Reading a coefficient (docs/measures.md, "Reading a coefficient").
    Metric(
        "prevalence_index",
        ("project",),
        "0 when categories are used equally, 1 when one takes every label",
        higher_is_better=None,
        label="prevalence index",
    ),
    Metric(
        "bias_index",
        ("project",),
        "how far two raters' category shares differ, over pairs (0: none)",
        higher_is_better=False,
        label="bias index",
    ),
    Metric(
        "category_share",
        ("category",),
        "share of the group's labels on pairable items in this category",
        higher_is_better=None,
        label="share",
    ),
    Metric(
        "specific_agreement",
        ("category",),
        "chance that a second rater agrees when one gives this category",
        label="agreement on it",
    ),
    # Ordinal scales (docs/measures.md, "Ordinal scales"): weighted coefficients.
    _agreement(
        "kappa_s_w",
        ("project",),
        "weighted kappa_S: near misses count partly (weights linear or quadratic)",
        LANDIS_KOCH,
        label="weighted kappa_S",
        headline=1,
        ordinal=True,
    ),
    _agreement(
        "fleiss_kappa_w",
        ("project",),
        "weighted Fleiss' kappa",
        LANDIS_KOCH,
        label="weighted Fleiss' kappa",
        ordinal=True,
    ),
    _agreement(
        "ac2",
        ("project",),
        "Gwet's AC2, AC1 with agreement weights",
        LANDIS_KOCH,
        label="AC2",
        ordinal=True,
    ),
    _agreement(
        "bp_w",
        ("project",),
        "weighted Brennan-Prediger kappa",
        LANDIS_KOCH,
        label="weighted bp",
        ordinal=True,
    ),
    _agreement(
        "alpha_ordinal",
        ("project",),
        "Krippendorff's alpha, ordinal metric (ranks, not distances)",
        KRIPPENDORFF,
        label="ordinal alpha",
        headline=2,
        ordinal=True,
    ),
    _agreement(
        "alpha_interval",
        ("project",),
        "Krippendorff's alpha, interval metric on the grade index",
        KRIPPENDORFF,
        label="interval alpha",
        ordinal=True,
    ),
    # Per human rater.
    Metric(
        "self_agreement",
        ("rater",),
        "share of agreeing pairs of looks at a repeated item",
        chart=1,
        title="Self-agreement (repeated presentations)",
        label="Self-agreement",
        needs_repeats=True,
    ),
    _agreement(
        "self_kappa",
        ("rater",),
        "self-agreement corrected for chance, (SA - s)/(1 - s)",
        LANDIS_KOCH,
        label="Self-kappa",
        # Not a column: reliability, its square root (clipped at 0), is the reading shown.
        table=False,
        needs_repeats=True,
    ),
    Metric(
        "reliability",
        ("rater",),
        "Y, the chance of a genuine answer rather than a random choice",
        chart=2,
        title="Reliability (chance of a genuine answer)",
        label="Reliability",
        needs_repeats=True,
    ),
    Metric(
        "random_choice",
        ("rater",),
        "x = 1 - reliability, the share of random choices",
        higher_is_better=False,
        chart=3,
        title="Random-choice share",
        label="Random-choice share",
        needs_repeats=True,
    ),
    _agreement(
        "s_vs_group",
        ("rater",),
        "Shah's S of the rater against the other humans",
        LANDIS_KOCH,
        chart=4,
        title="S against the group",
        label="S against the group",
    ),
    # Repeat coverage, per human rater in the cumulative snapshot (docs/repeats.md).
    Metric(
        "grade_bias",
        ("rater",),
        "mean grades above (+) or below (-) the other raters on her items",
        low=None,
        high=None,
        higher_is_better=None,
        label="grade bias",
        ordinal=True,
    ),
    Metric(
        "repeat_coverage",
        ("rater",),
        "repeated items she has / needed (below 1 while short)",
        high=None,
        from_stats=False,
    ),
    _count("repeats_needed", "repeated items needed for the wanted SA precision"),
    _count("repeats_planned", "repeats planned for the rater"),
    _count("repeats_fulfilled", "planned repeats she labeled"),
    _count("repeats_expired", "planned repeats that expired unlabeled", higher_is_better=False),
    _count("repeats_outstanding", "planned repeats still waiting"),
    # The Label Studio webhook, per project in the cumulative snapshot (docs/integrations.md).
    Metric(
        "label_studio_rejected",
        ("project",),
        "Label Studio webhook calls refused since the last sync (changes lost until one)",
        low=0.0,
        high=None,
        higher_is_better=False,
        from_stats=False,
    ),
    # Per model rater, against the human group.
    _agreement(
        "s",
        ("model",),
        "Shah's S of the model against the human group",
        LANDIS_KOCH,
        chart=1,
        title="S against the human group",
        label="S against the humans",
    ),
    _agreement(
        "kappa_va",
        ("model",),
        "Vanbelle-Albert kappa against the human group",
        LANDIS_KOCH,
        chart=2,
        title="kappa_VA against the human group",
        label="kappa_VA",
    ),
    # Per pair of human raters.
    _agreement(
        "cohen_kappa",
        ("pair",),
        "Cohen's kappa of two raters on the items both labeled",
        LANDIS_KOCH,
    ),
    _agreement(
        "cohen_w",
        ("pair",),
        "weighted Cohen's kappa of two raters (ordinal scales)",
        LANDIS_KOCH,
        ordinal=True,
    ),
)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}


def metrics_for(
    subject: str, *, from_stats: bool | None = None, ordinal: bool | None = None
) -> tuple[Metric, ...]:
    """The metrics reported for a subject kind, in catalogue order (``ordinal``: only those
    of ordinal scales (True) or those of every scale (False))."""
    return tuple(
        m
        for m in METRICS
        if subject in m.subjects
        and (from_stats is None or m.from_stats == from_stats)
        and (ordinal is None or m.ordinal == ordinal)
    )


def names_for(
    subject: str, *, from_stats: bool | None = None, ordinal: bool | None = None
) -> tuple[str, ...]:
    return tuple(m.name for m in metrics_for(subject, from_stats=from_stats, ordinal=ordinal))


def charts_for(subject: str) -> tuple[tuple[str, str], ...]:
    """(name, title) of the subject's dashboard charts, in page order."""
    charted = [m for m in metrics_for(subject) if m.chart is not None]
    return tuple((m.name, m.title) for m in sorted(charted, key=lambda m: m.chart or 0))


def headline() -> tuple[Metric, ...]:
    """The project page's headline cards, in page order."""
    shown = [m for m in metrics_for("project") if m.headline is not None]
    return tuple(sorted(shown, key=lambda m: m.headline or 0))


def table_columns(subject: str) -> tuple[Metric, ...]:
    """The computed metrics of a rater or model shown as columns of its dashboard table (and
    the CLI's), in catalogue order."""
    return tuple(m for m in metrics_for(subject, from_stats=True) if m.table)


def sparkline_metric(subject: str) -> str:
    """The metric a rater's or model's sparkline follows: its first chart."""
    return charts_for(subject)[0][0]


def bounds(metric: str) -> tuple[float, float]:
    """The range a metric can take, as numbers: an open end (None) is infinite. An unknown
    name is taken as a share, [0, 1]."""
    found = next((m for m in METRICS if m.name == metric), None)
    if found is None:
        return 0.0, 1.0
    low = -math.inf if found.low is None else found.low
    high = math.inf if found.high is None else found.high
    return low, high


def worse_when_higher() -> tuple[str, ...]:
    """Metrics where a rise is bad: rules on them use ``above`` / ``confidently_above``."""
    return tuple(m.name for m in METRICS if m.higher_is_better is False)


def metric_help(kinds: tuple[str, ...] = ("project", "rater", "model", "pair")) -> str:
    """The metrics of each subject kind, for a command's ``--metric`` help."""
    return "; ".join(f"{kind}: {', '.join(names_for(kind))}" for kind in kinds) + "."


def alert_metric_help() -> str:
    """The metrics a rule can watch, for ``auditor alerts add --metric``."""
    return "Metric to watch; " + metric_help(("project", "rater", "model"))


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def markdown_table() -> str:
    """The catalogue as the Markdown table of docs/alerts.md."""
    sense = {True: "higher", False: "lower", None: ""}
    lines = [
        "| metric | subject | range | better | band | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for m in METRICS:
        span = f"{_cell(m.low)} .. {_cell(m.high)}".strip()
        lines.append(
            f"| `{m.name}` | {', '.join(m.subjects)} | {span} | {sense[m.higher_is_better]} "
            f"| {m.band or ''} | {m.description} |"
        )
    return "\n".join(lines) + "\n"
