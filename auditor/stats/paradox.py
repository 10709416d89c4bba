"""When a low kappa next to a high observed agreement is the kappa paradox, say so in words
(docs/measures.md, "Reading a coefficient").

The rule: the most used category takes at least 75% of the labels (P_c >= 0.75) and observed
agreement exceeds kappa_S by at least 0.2. A dominant category makes agreement cheap, so chance
agreement is high and kappa low even when raters agree on almost everything; a rule on Ae alone
would fire on any two-category project with Ao below 0.8.

Works on the public JSON shape (``export.measure_set_to_dict``), so the one-shot command, the
dashboard and the report read the same sentence from a snapshot or a fresh computation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DOMINANT_SHARE = 0.75
GAP = 0.2


@dataclass(frozen=True)
class Paradox:
    """The numbers the sentence names; ``rare`` is the category with the lowest specific
    agreement apart from the dominant one (None: it has none defined)."""

    observed: float
    kappa_s: float
    dominant: str
    share: float
    rare: str | None
    rare_agreement: float | None
    ac1: float | None
    bp: float | None

    def sentence(self) -> str:
        """One or two sentences a team lead reads."""
        text = (
            f"Raters agree on {self.observed:.0%} of items, mostly on '{self.dominant}' "
            f"({self.share:.0%} of labels)"
        )
        if self.rare is not None and self.rare_agreement is not None:
            text += f"; on '{self.rare}' they agree {self.rare_agreement:.0%} of the time"
        text += f". kappa_S ({self.kappa_s:.2f}) reads low because one category dominates"
        beside = []
        if self.ac1 is not None:
            beside.append(f"AC1 {self.ac1:.2f}")
        if self.bp is not None:
            beside.append(f"PABAK {self.bp:.2f}")
        if beside:
            text += f": read {' and '.join(beside)} beside it"
        return text + "."


def _value(measures: Mapping[str, Any], name: str) -> float | None:
    found = measures.get(name)
    if not isinstance(found, Mapping):
        return None
    value = found.get("value")
    return None if value is None else float(value)


def find(rendered: Mapping[str, Any]) -> Paradox | None:
    """The paradox in a rendered measure set, or None when the rule does not fire (or a
    number it needs is undefined or missing, e.g. in a snapshot older than these measures)."""
    measures = rendered.get("measures", {})
    observed, kappa = _value(measures, "observed_agreement"), _value(measures, "kappa_s")
    shares = measures.get("category_share")
    if observed is None or kappa is None or not isinstance(shares, Mapping):
        return None
    values = {c: m.get("value") for c, m in shares.items() if isinstance(m, Mapping)}
    known = {c: float(v) for c, v in values.items() if v is not None}
    if not known:
        return None
    dominant = max(known, key=lambda c: known[c])
    if known[dominant] < DOMINANT_SHARE or observed - kappa < GAP:
        return None
    specific = measures.get("specific_agreement", {})
    others = {
        c: float(m["value"])
        for c, m in (specific.items() if isinstance(specific, Mapping) else ())
        if c != dominant and isinstance(m, Mapping) and m.get("value") is not None
    }
    rare = min(others, key=lambda c: others[c]) if others else None
    return Paradox(
        observed=observed,
        kappa_s=kappa,
        dominant=dominant,
        share=known[dominant],
        rare=rare,
        rare_agreement=others.get(rare) if rare is not None else None,
        ac1=_value(measures, "ac1"),
        bp=_value(measures, "bp"),
    )


def sentence(rendered: Mapping[str, Any]) -> str | None:
    """The paradox sentence of a rendered measure set, or None."""
    found = find(rendered)
    return None if found is None else found.sentence()
