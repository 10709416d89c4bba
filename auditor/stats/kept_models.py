"""Model raters against the human group from kept sums (``kept``; ``group.model_scores``).

Model t's Shah S and Vanbelle-Albert kappa_VA are functions of sums over t's items that are
pairable within the human group. Per item they add, at t's slot (G, R, ...):

    model_items    1
    model_ao       c_uc (c_uc - 1) / (m_u (m_u - 1)) at t's category c (S's Ao)
    model_amax     its largest value over c (S's Amax)
    model_share    onehot(c) (K)                      (S's and kappa_VA's category counts)
    model_po       c_uc / m_u at c;  model_pm  its largest value over c   (kappa_VA)
    model_prop     c_u / m_u (K)                      (kappa_VA's chance)

S's chance term sums Ae_u(c) = sum_{p != q in R_u} v_pc v_qc / (m_u (m_u - 1)) over t's items,
with v the group's biases that move with every label: what is kept is the weight of each
(model, human pair) M_tpq = sum_{u: t and p < q on u} 1 / (m_u (m_u - 1)), sparse, as project
totals (keys t << 42 | p << 21 | q, ``kept_triples.encode``; values (1, T)).
"""

from __future__ import annotations

import numpy as np

from auditor.stats import kept_triples as triples
from auditor.stats.group import s_from
from auditor.stats.tables import Cells, GroupTable, within_item_pairs
from auditor.stats.totals import safe_ratio

DENSE = (
    "model_items",
    "model_ao",
    "model_amax",
    "model_share",
    "model_po",
    "model_pm",
    "model_prop",
)


def model_sums(
    table: GroupTable,
    cells: Cells,
    is_model: np.ndarray,
    g_item: np.ndarray,
    slot: np.ndarray,
    groups: int,
    r: int,
) -> dict[str, np.ndarray]:
    """The model raters' per-item sums (module docstring) of ``table``'s pairable items, per
    group (dense) and ungrouped (the pair weights)."""
    k = table.counts.shape[1]
    mine = np.flatnonzero(is_model[cells.rater])
    position = np.searchsorted(table.items, cells.item[mine])
    position = np.minimum(position, max(table.n_pairable - 1, 0))
    on = (
        table.items[position] == cells.item[mine]
        if table.n_pairable
        else np.zeros(mine.shape, dtype=bool)
    )
    u, c = position[on], cells.category[mine][on]
    t = slot[cells.rater[mine][on]]
    counts = table.counts.astype(float)
    m = table.m.astype(float)
    agree = counts * (counts - 1.0) / (m * (m - 1.0))[:, None]
    proportion = counts / m[:, None]
    code = g_item[u] * r + t

    def by_code(weights: np.ndarray | None = None) -> np.ndarray:
        result: np.ndarray = np.bincount(code, weights=weights, minlength=groups * r)
        return result.astype(float).reshape(groups, r)

    share = np.bincount(code * k + c, minlength=groups * r * k).astype(float)
    prop = np.zeros((groups * r, k))
    for column in range(k):  # bounded by the number of categories
        prop[:, column] = np.bincount(code, weights=proportion[u, column], minlength=groups * r)
    out = {
        "model_items": by_code(),
        "model_ao": by_code(agree[u, c]),
        "model_amax": by_code(agree[u].max(axis=1) if u.size else np.zeros(0)),
        "model_share": share.reshape(groups, r, k),
        "model_po": by_code(proportion[u, c]),
        "model_pm": by_code(proportion[u].max(axis=1) if u.size else np.zeros(0)),
        "model_prop": prop.reshape(groups, r, k),
    }
    keys, weights = _pair_weights(table, u, t, slot, r)
    out["model_pair_key"], out["model_pair_weight"] = keys, weights
    return out


def _pair_weights(
    table: GroupTable, u: np.ndarray, t: np.ndarray, slot: np.ndarray, r: int
) -> tuple[np.ndarray, np.ndarray]:
    """M_tpq over the models' items u (model slots t): each human pair p < q on u once per
    model on u, weight 1 / (m_u (m_u - 1))."""
    if u.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((1, 0))
    order = np.argsort(u, kind="stable")
    u_sorted, t_sorted = u[order], t[order]
    per_item = np.bincount(u_sorted, minlength=table.n_pairable)
    first_model = np.concatenate([[0], np.cumsum(per_item)[:-1]])
    summed = triples.Accumulator(r)
    human_slot = slot[table.label_rater]
    for i, j in within_item_pairs(table.label_item, table.starts, table.m):
        item = table.label_item[i]
        repeat = per_item[item]
        if not repeat.any():
            continue
        i, j, item = np.repeat(i, repeat), np.repeat(j, repeat), np.repeat(item, repeat)
        offset = np.arange(item.shape[0]) - np.repeat(np.cumsum(repeat) - repeat, repeat)
        model = t_sorted[first_model[item] + offset]
        a, b = human_slot[i], human_slot[j]
        m = table.m[item].astype(float)
        summed.add(model, np.minimum(a, b), np.maximum(a, b), 1.0 / (m * (m - 1.0)))
    return summed.result()


def model_chance(
    keys: np.ndarray, weights: np.ndarray, bias: np.ndarray, n_raters: int
) -> np.ndarray:
    """Per state and model slot, S's summed chance (S, R, K): 2 sum_{p<q} M_tpq v_p * v_q.
    weights (1, T); bias (S, R, K)."""
    n_states, _, k = bias.shape
    out = np.zeros((n_states, n_raters, k))
    if keys.shape[0] == 0:
        return out
    t, p, q = triples.decode(keys)
    columns = np.arange(k)
    code = (t[:, None] * k + columns[None, :]).ravel()
    for s in range(n_states):  # bounded by G + 1 states (the jackknife's)
        values = 2.0 * weights[0][:, None] * bias[s][p] * bias[s][q]
        out[s] += np.bincount(code, weights=values.ravel(), minlength=n_raters * k).reshape(
            n_raters, k
        )
    return out


def model_s(
    n: np.ndarray, ao: np.ndarray, amax: np.ndarray, share: np.ndarray, chance: np.ndarray
) -> np.ndarray:
    """S from the model's sums (``group._s_from``): (S, R) each, share and chance (S, R, K)."""
    ae = safe_ratio(np.einsum("srk,srk->sr", share, chance), n**2)
    result: np.ndarray = s_from(safe_ratio(ao, n), ae, safe_ratio(amax, n))
    return result


def model_va(
    n: np.ndarray, po: np.ndarray, pm: np.ndarray, given: np.ndarray, prop: np.ndarray
) -> np.ndarray:
    """kappa_VA from the model's sums (``group._va_from``)."""
    pe = safe_ratio(np.einsum("srk,srk->sr", given, prop), n**2)
    result: np.ndarray = safe_ratio(safe_ratio(po, n) - pe, safe_ratio(pm, n) - pe)
    return result
