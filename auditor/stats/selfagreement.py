"""Self-agreement and the max-entropy rater model (MEASURES.md section 8).

Reference: Cabitza et al., the self-agreement and rho paper (seeds). For a rater p and an item u
it saw m >= 2 times, d_pu(c) is the share of p's labels on u that are c;

    SA_pu = sum_c d_pu(c)^2,     SA_p = mean over p's repeated items.

The rater model splits d = x P + y (x: a random choice following the project's category
shares P; y_c >= 0: peaked choices) with maximum entropy of (x, y). The entropy is concave in
x on [0, min_{P_c > 0} d_c / P_c]; its derivative -log x + sum_c P_c log(d_c - x P_c) falls
from +inf to -inf there, so a vectorised bisection finds the root for all cells at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_BISECTION_STEPS = 64


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
    return 0.5 * (low + high)


def split_entropy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Entropy of (x, y_1..y_K) per row (0 log 0 = 0); x (G,), y (G, K) -> (G,)."""
    parts = np.column_stack([x, y])
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(parts > 0, -parts * np.log(parts), 0.0)
    return terms.sum(axis=1)


@dataclass(frozen=True)
class SelfAgreement:
    """Per rater (R,): SA_p (NaN without repeats), repeated items, presentations, x_p, y_p (R, K).

    cell_sa : SA_pu per repeated cell (G,); cell_rater, cell_item : (G,).
    """

    sa: np.ndarray
    n_items: np.ndarray
    n_presentations: np.ndarray
    x: np.ndarray
    y: np.ndarray
    cell_sa: np.ndarray
    cell_x: np.ndarray
    cell_rater: np.ndarray
    cell_item: np.ndarray


def self_agreement(
    counts: np.ndarray,
    cell_rater: np.ndarray,
    cell_item: np.ndarray,
    prevalence: np.ndarray,
    n_raters: int,
) -> SelfAgreement:
    """SA and the rater model from the category counts (G, K) of repeated (item, rater) cells."""
    k = counts.shape[1]
    total = counts.sum(axis=1)
    shares = counts / np.maximum(total, 1)[:, None]
    cell_sa = (shares**2).sum(axis=1)
    x, y = max_entropy_split(shares, prevalence)
    n_items = np.bincount(cell_rater, minlength=n_raters)
    denominator = np.where(n_items > 0, n_items, np.nan)
    rater_y = np.empty((n_raters, k))
    for c in range(k):  # bounded by the number of categories
        rater_y[:, c] = np.bincount(cell_rater, weights=y[:, c], minlength=n_raters) / denominator
    return SelfAgreement(
        sa=np.bincount(cell_rater, weights=cell_sa, minlength=n_raters) / denominator,
        n_items=n_items,
        n_presentations=np.bincount(cell_rater, weights=total, minlength=n_raters).astype(np.int64),
        x=np.bincount(cell_rater, weights=x, minlength=n_raters) / denominator,
        y=rater_y,
        cell_sa=cell_sa,
        cell_x=x,
        cell_rater=cell_rater,
        cell_item=cell_item,
    )
