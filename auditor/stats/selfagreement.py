"""Self-agreement and the rater model (docs/measures.md, "Version 2").

Reference: Cabitza et al., the self-agreement and rho paper (seeds). For a rater p and an item u
it saw m >= 2 times, n_puc of those looks giving c,

    SA_pu = sum_c n_puc (n_puc - 1) / (m (m - 1)),     SA_p = mean over p's repeated items,

the share of agreeing pairs of looks: an unbiased estimate of the chance that two looks agree,
whatever the number of looks (the paper's sum_c d(c)^2 counts each look agreeing with itself).

The rater model: with chance x_p a random choice drawn from the category shares P, otherwise
the rater's genuine reading of the item. Two looks then agree with chance s + (1 - s) Y_p^2,
s = sum_c P(c)^2, Y_p = 1 - x_p. ``moments`` (default) solves that for Y_p; ``max_entropy``
keeps the paper's per-item max-entropy split d = x P + y, whose bound min_c d(c) / P(c) reads
x = 0 whenever a few looks miss a category in use (always with two looks and K > 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.domain import RaterModel
from auditor.stats.totals import EPS

_BISECTION_STEPS = 64

SINGLE_CATEGORY = "a single category in use"


def max_entropy_split(shares: np.ndarray, prevalence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve d = x P + y for every row of ``shares`` with maximum entropy of (x, y).

    shares : d, shape (G, K), rows summing to 1. prevalence : P, shape (K,), summing to 1.
    Returns x (G,) and y (G, K).
    """
    used = prevalence > 0
    p = prevalence[used]
    upper = (shares[:, used] / p).min(axis=1) if p.size else np.zeros(shares.shape[0])
    x = np.zeros(shares.shape[0])
    # x = 0 whenever the rater never used some category in use (most cells with few looks);
    # the other cells often repeat the same shares, so each distinct row is solved once.
    open_cells = np.flatnonzero(upper > 0)
    if open_cells.size:
        distinct, back = np.unique(shares[open_cells], axis=0, return_inverse=True)
        x[open_cells] = _bisect(distinct[:, used], p, (distinct[:, used] / p).min(axis=1))[
            back.reshape(-1)
        ]
    y = np.clip(shares - x[:, None] * prevalence, 0.0, None)
    return x, y


def _bisect(d: np.ndarray, p: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Root in (0, upper) of -log x + sum_c p_c log(d_c - x p_c) for each row of d (G, K')."""
    low = np.zeros_like(upper)
    high = upper.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(_BISECTION_STEPS):  # fixed number of halvings, vectorised over rows
            middle = 0.5 * (low + high)
            slope = -np.log(middle) + (p * np.log(d - middle[:, None] * p)).sum(axis=1)
            rising = slope > 0
            low = np.where(rising, middle, low)
            high = np.where(rising, high, middle)
    result: np.ndarray = 0.5 * (low + high)
    return result


def pairs_agreeing(counts: np.ndarray) -> np.ndarray:
    """SA_pu per repeated cell: the share of agreeing pairs of looks; counts (G, K) -> (G,)."""
    looks = counts.sum(axis=1).astype(float)
    agreeing = (counts * (counts - 1)).sum(axis=1).astype(float)
    result: np.ndarray = agreeing / np.maximum(looks * (looks - 1), 1.0)
    return result


@dataclass(frozen=True)
class SelfAgreement:
    """Per rater (R,): SA_p (NaN without repeats), repeated items, presentations.

    cell_sa : SA_pu per repeated cell (G,); cell_counts : its look counts (G, K);
    cell_rater, cell_item : (G,).
    """

    sa: np.ndarray
    n_items: np.ndarray
    n_presentations: np.ndarray
    cell_sa: np.ndarray
    cell_counts: np.ndarray
    cell_rater: np.ndarray
    cell_item: np.ndarray


def self_agreement(
    counts: np.ndarray, cell_rater: np.ndarray, cell_item: np.ndarray, n_raters: int
) -> SelfAgreement:
    """SA from the category counts (G, K) of repeated (item, rater) cells."""
    cell_sa = pairs_agreeing(counts)
    n_items = np.bincount(cell_rater, minlength=n_raters)
    denominator = np.where(n_items > 0, n_items, np.nan)
    return SelfAgreement(
        sa=np.bincount(cell_rater, weights=cell_sa, minlength=n_raters) / denominator,
        n_items=n_items,
        n_presentations=np.bincount(
            cell_rater, weights=counts.sum(axis=1), minlength=n_raters
        ).astype(np.int64),
        cell_sa=cell_sa,
        cell_counts=counts,
        cell_rater=cell_rater,
        cell_item=cell_item,
    )


@dataclass(frozen=True)
class RaterFit:
    """The rater model per rater (R,), NaN where undefined (``reason`` says why when global).

    chance : s = sum_c P(c)^2. self_kappa : (SA_p - s) / (1 - s). reliability : Y_p.
    random_choice : x_p = 1 - Y_p. cell_x : per repeated cell x (max_entropy only, else None).
    """

    mode: RaterModel
    chance: float
    self_kappa: np.ndarray
    reliability: np.ndarray
    random_choice: np.ndarray
    cell_x: np.ndarray | None
    reason: str | None


def chance_agreement(prevalence: np.ndarray) -> np.ndarray:
    """s = sum_c P(c)^2 over the last axis: two looks by a rater choosing at random agree."""
    result: np.ndarray = (prevalence**2).sum(axis=-1)
    return result


def corrected_for_chance(agreement: np.ndarray, chance: np.ndarray | float) -> np.ndarray:
    """(SA - s) / (1 - s); 1 - s is floored at 1e-300, which only a single category reaches
    (where the callers that report it have already said "undefined")."""
    result: np.ndarray = (agreement - chance) / np.maximum(1.0 - chance, 1e-300)
    return result


def kappa_to_reliability(self_kappa: np.ndarray) -> np.ndarray:
    """Y = sqrt(clip(self_kappa, 0, 1)): two looks agree with chance s + (1 - s) Y^2."""
    result: np.ndarray = np.sqrt(np.clip(self_kappa, 0.0, 1.0))
    return result


def fit(model: SelfAgreement, prevalence: np.ndarray, mode: RaterModel) -> RaterFit:
    """x_p and Y_p of every rater with repeats by ``mode``; P = ``prevalence`` (K,)."""
    chance = float(chance_agreement(prevalence))
    n_raters = model.sa.shape[0]
    undefined = np.full(n_raters, np.nan)
    if 1.0 - chance <= EPS:  # one category in use: chance agreement is 1, nothing to correct
        return RaterFit(mode, chance, undefined, undefined, undefined, None, SINGLE_CATEGORY)
    self_kappa = corrected_for_chance(model.sa, chance)
    if mode == RaterModel.MOMENTS:
        reliability = kappa_to_reliability(self_kappa)
        return RaterFit(mode, chance, self_kappa, reliability, 1.0 - reliability, None, None)
    counts = model.cell_counts
    shares = counts / np.maximum(counts.sum(axis=1), 1)[:, None]
    cell_x, _ = max_entropy_split(shares, prevalence)
    denominator = np.where(model.n_items > 0, model.n_items, np.nan)
    x = np.bincount(model.cell_rater, weights=cell_x, minlength=n_raters) / denominator
    return RaterFit(mode, chance, self_kappa, 1.0 - x, x, cell_x, None)
