"""Krippendorff's alpha for nominal data with missing values (docs/measures.md, "Project
measures").

Reference: Krippendorff (2004/2011), "Computing Krippendorff's alpha-reliability". With the
coincidence matrix o_cc' = sum_u (c_uc c_uc' - [c = c'] c_uc) / (m_u - 1) over units with
m_u >= 2, n_c = sum_u c_uc and n = sum_c n_c:

    alpha = 1 - (n - 1) (n - sum_c o_cc) / (n^2 - sum_c n_c^2)

so the per-item sufficient statistics are m_u, D_u = sum_c c_uc (c_uc - 1) / (m_u - 1) and
c_u (K), and the jackknife and bootstrap follow from ``ItemTotals``.
"""

from __future__ import annotations

import numpy as np

from auditor.stats.tables import GroupTable
from auditor.stats.totals import ItemTotals, safe_ratio


def _alpha(totals: np.ndarray) -> np.ndarray:
    n, diagonal, counts = totals[..., 0], totals[..., 1], totals[..., 2:]
    expected = n**2 - np.einsum("...k,...k->...", counts, counts)
    return 1.0 - safe_ratio((n - 1.0) * (n - diagonal), expected)


def krippendorff_alpha(table: GroupTable) -> ItemTotals:
    """Nominal alpha over pairable items; per-item statistics [m_u, D_u, c_u1..c_uK]."""
    diagonal = (table.counts * (table.counts - 1)).sum(axis=1) / (table.m - 1)
    features = np.column_stack([table.m, diagonal, table.counts]).astype(float)
    return ItemTotals(features, _alpha)
