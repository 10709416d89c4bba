"""Typed results of the statistics core: one ``Measure`` per number, gathered in a ``MeasureSet``.

Every number carries the count it was computed from and, when it is undefined, the reason; an
interval carries its method and level. Nothing here computes anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.domain import IntervalMethod, RaterModel, Scale, Weights
from auditor.stats.catalogue import names_for

# The project-level measures of the public JSON contract (issue 3 item 4, issue 24), in order;
# those of ``ORDINAL_MEASURES`` only on an ordinal scale.
PROJECT_MEASURES: tuple[str, ...] = names_for("project", from_stats=True)
ORDINAL_MEASURES: tuple[str, ...] = names_for("project", ordinal=True)
# Per category (a Measure per category name under ``measures.<name>``).
CATEGORY_MEASURES: tuple[str, ...] = names_for("category")


@dataclass(frozen=True)
class Measure:
    """One reported number.

    value : the estimate, or None when undefined (``reason`` says why; never NaN, never 0).
    ci_low, ci_high : the interval over items, or None (``ci_reason`` says why when asked for).
    n : the count the measure used (pairable items, repeated items, shared items...).
    band : Landis-Koch or Krippendorff label of the value (see docs/measures.md), or None.
    interval_method, interval_level : how the interval was obtained.
    """

    value: float | None
    n: int = 0
    reason: str | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    band: str | None = None
    interval_method: IntervalMethod = IntervalMethod.NONE
    interval_level: float | None = None
    ci_reason: str | None = None

    def __post_init__(self) -> None:
        if self.value is None and not self.reason:
            raise ValueError("an undefined Measure needs a reason")


@dataclass(frozen=True)
class RaterResult:
    """A human rater: consistency with itself and agreement with the rest of the group.

    self_agreement : SA_p, the share of agreeing pairs of looks over repeated items.
    self_kappa : (SA_p - s) / (1 - s), s = sum_c P(c)^2.
    reliability : Y_p of the rater model (chance of a genuine answer); random_choice : 1 - Y_p.
    """

    rater: str
    self_agreement: Measure
    self_kappa: Measure
    reliability: Measure
    random_choice: Measure
    s_vs_group: Measure
    n_repeated_items: int
    n_presentations: int
    grade_bias: Measure | None = None  # ordinal scales only
    confusion: tuple[tuple[float | None, ...], ...] = ()  # row-normalised, K x K
    confusion_n: tuple[int, ...] = ()  # her pairable items per category (the rows' counts)


@dataclass(frozen=True)
class ModelResult:
    """A model rater scored against the fixed human group (Shah S and Vanbelle-Albert kappa_VA)."""

    rater: str
    s: Measure
    kappa_va: Measure


@dataclass(frozen=True)
class CohenPair:
    """Cohen's kappa of two human raters on the items both labeled; on an ordinal scale also
    the weighted kappa (``cohen_w``)."""

    rater_a: str
    rater_b: str
    kappa: Measure
    n_items: int
    cohen_w: Measure | None = None


@dataclass(frozen=True)
class MeasureSet:
    """Everything ``compute_measures`` reports for one set of labels."""

    n_labels: int
    n_items: int
    n_raters: int
    n_pairable_items: int
    categories: tuple[str, ...]
    measures: dict[str, Measure]
    raters: tuple[RaterResult, ...]
    models: tuple[ModelResult, ...]
    pairwise_cohen: tuple[CohenPair, ...]
    interval_method: IntervalMethod
    interval_level: float
    seed: int | None = None
    bootstrap_resamples: int | None = None
    rater_model: RaterModel = RaterModel.MOMENTS
    self_agreement_spread: float | None = None
    notes: tuple[str, ...] = field(default=())
    by_category: dict[str, dict[str, Measure]] = field(default_factory=dict)
    scale: Scale = Scale.NOMINAL
    weights: Weights | None = None
