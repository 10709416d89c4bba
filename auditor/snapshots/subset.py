"""Cut one project's label arrays down to a scope (a window by labeled_at), vectorised.

The recompute loads a project's labels once and derives every scope from that one load, so a
window costs a mask and a re-indexing, not another database round trip.
"""

from __future__ import annotations

import numpy as np

from auditor.domain import LabelArrays
from auditor.snapshots.scopes import Window


def window_mask(order_us: np.ndarray, window: Window) -> np.ndarray | None:
    """Boolean mask of the labels whose labeled_at lies in ``window`` (ends inclusive).

    Parameters
    ----------
    order_us : int64 array, shape (n_labels,)
        labeled_at in microseconds since the epoch.
    window : Window
        The range; both ends None means every label, returned as None (no copy needed).

    Returns
    -------
    bool array, shape (n_labels,), or None for "all labels".
    """
    start, end = window.bounds_us()
    if start is None and end is None:
        return None
    mask = np.ones(order_us.shape[0], dtype=bool)
    if start is not None:
        mask &= order_us >= start
    if end is not None:
        mask &= order_us <= end
    return mask


def subset_labels(labels: LabelArrays, mask: np.ndarray | None) -> LabelArrays:
    """The labels selected by ``mask``, with items and raters re-indexed densely.

    Raters and items with no label in the subset disappear, so a window reports only the
    raters who worked in it. Categories keep the project's full vocabulary and indices, so
    values stay comparable across scopes. Row order (label-id order) is preserved.

    Parameters
    ----------
    labels : LabelArrays
        n_labels rows, n_items items, n_raters raters.
    mask : bool array, shape (n_labels,), or None
        None returns ``labels`` itself.
    """
    if mask is None:
        return labels
    if mask.shape != labels.item.shape:
        raise ValueError(f"mask has shape {mask.shape}, labels have {labels.item.shape}")
    item_codes = labels.item[mask]
    rater_codes = labels.rater[mask]
    kept_items, item_index = np.unique(item_codes, return_inverse=True)
    kept_raters, rater_index = np.unique(rater_codes, return_inverse=True)
    item_names = tuple(labels.item_names[i] for i in kept_items) if labels.item_names else ()
    rater_names = tuple(labels.rater_names[r] for r in kept_raters) if labels.rater_names else ()
    return LabelArrays(
        item=item_index.astype(np.int64, copy=False),
        rater=rater_index.astype(np.int64, copy=False),
        category=labels.category[mask],
        order=labels.order[mask],
        rater_is_model=labels.rater_is_model[kept_raters],
        category_names=labels.category_names,
        rater_names=rater_names,
        item_names=item_names,
        label_ids=None if labels.label_ids is None else labels.label_ids[mask],
    )
