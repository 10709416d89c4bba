"""The kept statistics against a rebuild from the labels (issue 22): ``auditor recompute
PROJECT --rebuild``, and the kept measures' estimates for the service."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from auditor.errors import NotFound
from auditor.services.recompute.kept import (
    Layout,
    Span,
    build,
    save_whole,
    state_of,
    update_kept,
)
from auditor.stats import kept, kept_models, kept_pairs
from auditor.stats import kept_estimates as measures
from auditor.stats import kept_triples as triples
from auditor.storage.kept_repository import CUMULATIVE
from auditor.storage.unit_of_work import UnitOfWork


def rho_options(uow: UnitOfWork, project_id: int) -> measures.RhoOptions:
    project = uow.projects.by_id(project_id)
    if project is None:
        raise NotFound(f"no project with id {project_id}")
    chosen = project.settings
    return measures.RhoOptions(chosen.rho_mode, chosen.rho_unrated, chosen.rater_model)


def kept_estimates(
    uow: UnitOfWork, project_id: int, level: float = 0.95
) -> dict[str, measures.KeptEstimate]:
    """The kept measures' estimates and grouped jackknife intervals from the stored state
    (rho too where the project's settings are covered)."""
    with uow:
        record = uow.kept.load(project_id)
        options = rho_options(uow, project_id)
    if record is None:
        return {}
    layout = Layout.parse(record.signature)
    if layout is None:
        return {}
    return measures.estimates(state_of(record, layout), level, options)


@dataclass(frozen=True)
class Verification:
    """The kept state of one scope against a rebuild from the labels at the same watermark
    (``windows``: the same for each rolling window's state, beside the cumulative one)."""

    watermark: int
    label_count: int
    largest_difference: float  # over every kept array and every estimate
    estimates: dict[str, tuple[float | None, float | None]]  # name: (kept, rebuilt)
    scope: str = CUMULATIVE
    windows: tuple[Verification, ...] = ()

    @property
    def agrees(self) -> bool:
        return self.largest_difference <= 1e-9 and all(w.agrees for w in self.windows)


def verify_kept(
    uow: UnitOfWork, project_id: int, *, store: bool = True, scope: str = CUMULATIVE
) -> Verification:
    """Update the kept state (the cumulative one; a window's is checked where it stands:
    moving it needs the clock of a recompute), rebuild it from the labels up to the same
    watermark (and, for a window, the same labeled_at range), compare, and (``store``) keep
    the rebuilt state (``auditor recompute PROJECT --rebuild``)."""
    if scope == CUMULATIVE:
        update_kept(uow, project_id)
    with uow:
        record = uow.kept.load(project_id, scope)
        options = rho_options(uow, project_id)
    if record is None:
        raise NotFound(f"project {project_id} has no kept statistics")
    layout = Layout.parse(record.signature)
    assert layout is not None, "update_kept leaves a state of this version"
    span = Span(scope, record.start_us, record.end_us)
    incremental = state_of(record, layout)
    rebuilt, rebuilt_layout, _, count = build(uow, project_id, record.watermark, span)
    # the rebuild numbers the raters it finds by id; the kept state keeps every rater it saw
    order = [layout.raters.index(r) for r in rebuilt_layout.raters]
    incremental = reordered(incremental, order)
    largest = max(
        float(np.abs(getattr(incremental, n) - v).max(initial=0.0))
        for n, v in rebuilt.additive().items()
    )
    for key, values in (*kept.TABLES, *kept.GROUPED_TABLES):  # on the union of their keys
        _, (kept_values, rebuilt_values) = triples.align(
            [
                (getattr(incremental, key), getattr(incremental, values)),
                (getattr(rebuilt, key), getattr(rebuilt, values)),
            ]
        )
        difference = np.abs(kept_values - rebuilt_values)
        largest = max(largest, float(difference.max(initial=0.0)))
    ours = measures.estimates(incremental, rho=options)
    theirs = measures.estimates(rebuilt, rho=options)
    pairs = {name: (ours[name].value, theirs[name].value) for name in ours}
    for a, b in pairs.values():
        if (a is None) != (b is None):
            largest = float("inf")
        elif a is not None and b is not None:
            largest = max(largest, abs(a - b))
    if store:
        save_whole(uow, project_id, rebuilt, rebuilt_layout, record.watermark, count, span)
    return Verification(record.watermark, count, largest, pairs, scope)


def verify_every_scope(uow: UnitOfWork, project_id: int) -> Verification:
    """``verify_kept`` of the cumulative state, with each stored window's beside it."""
    cumulative = verify_kept(uow, project_id)
    with uow:
        windows = [s for s in uow.kept.scopes(project_id) if s != CUMULATIVE]
    checked = tuple(verify_kept(uow, project_id, scope=s) for s in windows)
    return dataclasses.replace(cumulative, windows=checked)


def rebuild_verified(uow: UnitOfWork, project_id: int) -> Verification | None:
    """``verify_kept`` under the project's recompute lock; None when a recompute holds it."""
    with uow.project_lock(project_id) as lock:
        if not lock.acquired:
            return None
        return verify_every_scope(uow, project_id)


def in_id_order(state: kept.KeptStats, layout: Layout) -> tuple[kept.KeptStats, list[int]]:
    """The state with its rater slots in rater-id order (the full load's numbering, so
    ``kept_measure_set`` lists raters, models and pairs as ``compute_measures`` does) and the
    rater ids of the new slots. Updates append new raters in order of arrival."""
    ids = sorted(layout.raters)
    if ids == layout.raters:
        return state, ids
    return reordered(state, [layout.raters.index(r) for r in ids]), ids


def reordered(state: kept.KeptStats, order: list[int]) -> kept.KeptStats:
    """The state with its raters taken in ``order`` (slots without labels left out)."""
    index = np.asarray(order, dtype=np.int64)
    return kept.KeptStats(
        n=state.n,
        ao=state.ao,
        m=state.m,
        diagonal=state.diagonal,
        counts=state.counts,
        rater_counts=state.rater_counts[:, index],
        pair_weight=_pairs(state.pair_weight, index),
        agree=_pairs(state.agree, index),
        sa_sum=state.sa_sum[:, index],
        sa_items=state.sa_items[:, index],
        looks=state.looks[:, index],
        inverse_m=state.inverse_m[:, index],
        effect_m=state.effect_m[:, index],
        ao_effect=state.ao_effect,
        shares=state.shares,
        single=state.single,
        agreeing=state.agreeing,
        spread=state.spread,
        looks_by_category=state.looks_by_category,
        labels=state.labels,
        items=state.items,
        rater_labels=state.rater_labels[:, index],
        s_items=state.s_items[:, index],
        s_ao=state.s_ao[:, index],
        s_amax=state.s_amax[:, index],
        s_share=state.s_share[:, index],
        confusion=state.confusion[:, index],
        products=state.products,
        inverse_m1=state.inverse_m1,
        coincidences=state.coincidences,
        **{name: getattr(state, name)[:, index] for name in kept_models.DENSE},
        **_triples(state, index),
        **_pair_tables(state, index),
        **_differences(state, index),
    )


def _differences(state: kept.KeptStats, index: np.ndarray) -> dict[str, np.ndarray]:
    """The pair differences renumbered: a pair whose order flips changes the sign of its
    differences (a - b), not of its shared count."""
    new_slot = np.full(max(state.n_raters, 1), -1, dtype=np.int64)
    new_slot[index] = np.arange(index.shape[0])
    a, b = (new_slot[x] for x in kept_pairs.decode(state.difference_key))
    keep = (a >= 0) & (b >= 0)
    a, b, values = a[keep], b[keep], state.pair_difference[:, keep].copy()
    flip = a > b
    values[:, flip, :-1] *= -1.0
    keys = (np.minimum(a, b) << kept_pairs.SHIFT) | np.maximum(a, b)
    order = np.argsort(keys)
    return {"difference_key": keys[order], "pair_difference": values[:, order]}


def _pair_tables(state: kept.KeptStats, index: np.ndarray) -> dict[str, np.ndarray]:
    """The pair tables renumbered (new slot i holds old slot index[i]); a pair whose order
    flips has its table transposed (rows: the lower slot's category)."""
    new_slot = np.full(max(state.n_raters, 1), -1, dtype=np.int64)
    new_slot[index] = np.arange(index.shape[0])
    a, b = (new_slot[x] for x in kept_pairs.decode(state.pair_key))
    keep = (a >= 0) & (b >= 0)
    a, b, tables = a[keep], b[keep], state.pair_confusion[0][keep]
    flip = a > b
    tables = np.where(flip[:, None, None], np.swapaxes(tables, 1, 2), tables)
    low, high = np.minimum(a, b), np.maximum(a, b)
    keys = (low << kept_pairs.SHIFT) | high
    order = np.argsort(keys)
    return {"pair_key": keys[order], "pair_confusion": tables[order][None]}


def _triples(state: kept.KeptStats, index: np.ndarray) -> dict[str, np.ndarray]:
    """The rater triples renumbered: new slot i holds old slot index[i]."""
    new_slot = np.full(max(state.n_raters, 1), -1, dtype=np.int64)
    new_slot[index] = np.arange(index.shape[0])
    keys, weights = triples.renumbered(state.triple_key, state.triple_weight, new_slot)
    model_keys, model_weights = triples.renumbered(
        state.model_pair_key, state.model_pair_weight, new_slot, sorted_from=1
    )
    return {
        "triple_key": keys,
        "triple_weight": weights,
        "model_pair_key": model_keys,
        "model_pair_weight": model_weights,
    }


def _pairs(upper: np.ndarray, index: np.ndarray) -> np.ndarray:
    """An upper-triangle pair table (G, R, R, ...) renumbered: symmetrise, take, keep p < q."""
    full = upper + np.swapaxes(upper, 1, 2)
    taken = full[:, index][:, :, index]
    r = index.shape[0]
    mask = np.triu(np.ones((r, r), dtype=bool), 1)
    shape = (1, r, r) + (1,) * (upper.ndim - 3)
    result: np.ndarray = taken * mask.reshape(shape)
    return result
