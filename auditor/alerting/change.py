"""A change detector per rater: a Bernoulli CUSUM on her stream of evidence (issue 21).

Pure code: no I/O, no clock; randomness only in :func:`calibrate_limit`, from a seed.

The evidence, in the order the labels arrive (:func:`evidence`):

* **repeat**: she labels an item she labeled before; the new look agrees with her previous one
  or not (one comparison);
* **group**: a label of hers meets the latest labels of the other human raters who labeled
  the item before her: one observation per label, the share ``k/m`` of the ``m`` others she
  disagrees with (a fractional Bernoulli); a label that met nobody (she was first) is read
  against the next label of another rater on the item. Each label is read once: counting it
  again for every later partner would count one answer of hers several times, and those
  comparisons are strongly correlated (a random answer disagrees with every partner).

Each stream has her own baseline disagreement rate ``p0``, learned from her first
``baseline`` comparisons in that stream (after the start or a restart). ``baseline_se`` can
read it conservatively (``p0`` plus that many standard errors ``sqrt(p0 (1 - p0) / n)``, an
upper bound for the fractional group shares too); the default is 0: one SE made the detector
miss a drop to 0.75 too often (``benchmarks/alert_quality.py``, docs/alerts.md). The
alternative is
the same stream with the odds of disagreeing multiplied by ``odds_ratio``:
``p1 = p0 r / (1 - p0 + p0 r)``. Each observation with disagreement share ``d`` (0 or 1 for a
repeat, ``k/m`` for a group observation) adds its log-likelihood ratio
``d log(p1/p0) + (1 - d) log((1 - p1)/(1 - p0))`` to the statistic
``S`` (``S = max(0, S + llr)``, capped at ``cap`` times the limit so a long bad spell does not
take weeks to wash out once she is back). The rule breaches while ``S >= h``. The cap is the
evidence needed to say she is back: from the cap, ``S`` falls below ``h`` once her labels
give ``(cap - 1) h`` nats (4 at h = 16, likelihood ratio about 55) for ``p0`` over ``p1``.

``h`` comes from a target in-control average run length (ARL0, in comparisons):
:func:`calibrate_limit` simulates the CUSUM on in-control Bernoulli comparisons, its
baseline estimated as in service, and returns the smallest ``h`` on a grid whose run
lengths reach the target. The per-rater false-alarm rate of the default rule is then
checked on the demo's simulated world by ``benchmarks/alert_quality.py`` (docs/alerts.md).

A detector restarts (``restart``): the statistic goes to 0 and both baselines are learned
again, after an episode resolves (the rater was retrained: her new normal is the baseline)
and after a revert (the stream it had read is no longer the project's labels).

**Looks made under an alarm are no reference for her later repeats.** When the labels carry
a sequence number (the label id), the detector keeps ``stale_upto``: the sequence of her
latest label read before her episode fired (``alarm``, called by the service on the firing
transition) or while it is open. A repeat whose first look is
at or before it is left out (both from the statistic and from a new baseline): comparing a
look after retraining with one from the bad spell tests the bad spell again, not whether she
is back, and kept her episodes open for days after retraining. Her group observations (her
current label against the others) still count, so a rater who stays bad stays flagged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

REPEAT = "repeat"
GROUP = "group"
STREAMS = (REPEAT, GROUP)


@dataclass(frozen=True)
class ChangeSettings:
    """The detector's parameters.

    odds_ratio : the rise in the odds of disagreeing it is tuned to detect (2: from 0.15 to
        0.26 disagreement, a reliability of about 0.92 falling to about 0.8).
    limit : h, the decision limit on the statistic.
    baseline : observations per stream that form her baseline before that stream counts.
    cap : the statistic is kept at or below ``cap * limit`` (1.25: 4 nats above h = 16 to
        come back from).
    baseline_se : standard errors added to the learned baseline rate (0: the point estimate).
    """

    limit: float
    odds_ratio: float = 2.0
    baseline: Mapping[str, int] = field(default_factory=lambda: {REPEAT: 60, GROUP: 300})
    cap: float = 1.25
    baseline_se: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.limit) and self.limit > 0):
            raise ValueError(f"limit must be positive, got {self.limit}")
        if not (math.isfinite(self.odds_ratio) and self.odds_ratio > 1):
            raise ValueError(f"odds_ratio must be > 1, got {self.odds_ratio}")
        if self.cap < 1:
            raise ValueError(f"cap must be >= 1, got {self.cap}")
        if not (math.isfinite(self.baseline_se) and self.baseline_se >= 0):
            raise ValueError(f"baseline_se must be >= 0, got {self.baseline_se}")
        for stream in STREAMS:
            if self.baseline.get(stream, 0) < 1:
                raise ValueError(f"baseline[{stream!r}] must be >= 1")


@dataclass
class RaterDetector:
    """The incremental state of one rater's detector (JSON-able with ``as_dict``)."""

    statistic: float = 0.0
    # baseline per stream: observations and their summed disagreement shares
    base_n: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STREAMS, 0))
    base_k: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STREAMS, 0.0))
    tested: int = 0  # observations the statistic has read since the last restart
    restarts: int = 0
    # her latest label (sequence) read while her episode was open; her looks at or before it
    # are no reference for a repeat (kept across restarts)
    stale_upto: int = -1
    alarmed: bool = False  # her episode is open (``alarm`` .. ``restart``)
    last_seen: int = -1  # the sequence of her latest label read

    def learned(self, settings: ChangeSettings, stream: str) -> bool:
        return self.base_n[stream] >= settings.baseline[stream]

    def ready(self, settings: ChangeSettings) -> bool:
        """At least one stream has its baseline: the statistic can say something."""
        return any(self.learned(settings, s) for s in STREAMS)

    def p0(self, stream: str) -> float:
        # half a count each side keeps a baseline of no disagreement from reading as p0 = 0
        return (self.base_k[stream] + 0.5) / (self.base_n[stream] + 1.0)

    def reference(self, stream: str, settings: ChangeSettings) -> float:
        """The baseline rate the CUSUM tests against: ``p0`` plus ``baseline_se`` SEs."""
        p0 = self.p0(stream)
        se = math.sqrt(p0 * (1.0 - p0) / (self.base_n[stream] + 1.0))
        return min(p0 + settings.baseline_se * se, 0.99)

    def as_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "base_n": dict(self.base_n),
            "base_k": dict(self.base_k),
            "tested": self.tested,
            "restarts": self.restarts,
            "stale_upto": self.stale_upto,
            "alarmed": self.alarmed,
            "last_seen": self.last_seen,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RaterDetector:
        return cls(
            statistic=float(data.get("statistic", 0.0)),
            base_n={s: int(data.get("base_n", {}).get(s, 0)) for s in STREAMS},
            base_k={s: float(data.get("base_k", {}).get(s, 0.0)) for s in STREAMS},
            tested=int(data.get("tested", 0)),
            restarts=int(data.get("restarts", 0)),
            stale_upto=int(data.get("stale_upto", -1)),
            alarmed=bool(data.get("alarmed", False)),
            last_seen=int(data.get("last_seen", -1)),
        )


def alternative(p0: float, odds_ratio: float) -> float:
    """p1: the disagreement rate with the odds of ``p0`` multiplied by ``odds_ratio``."""
    return p0 * odds_ratio / (1.0 - p0 + p0 * odds_ratio)


def update(
    detector: RaterDetector, stream: str, disagreements: int, comparisons: int, s: ChangeSettings
) -> None:
    """Read one observation: ``disagreements`` of ``comparisons`` in ``stream`` (its share)."""
    if comparisons <= 0:
        return
    if not 0 <= disagreements <= comparisons:
        raise ValueError(f"disagreements {disagreements} not in 0..{comparisons}")
    share = disagreements / comparisons
    if not detector.learned(s, stream):
        detector.base_n[stream] += 1
        detector.base_k[stream] += share
        return
    p0 = detector.reference(stream, s)
    p1 = alternative(p0, s.odds_ratio)
    llr = share * math.log(p1 / p0) + (1.0 - share) * math.log((1.0 - p1) / (1.0 - p0))
    detector.statistic = min(s.cap * s.limit, max(0.0, detector.statistic + llr))
    detector.tested += 1


def restart(detector: RaterDetector) -> None:
    """Start again: statistic 0, baselines to be learned anew (``stale_upto`` stays: the
    looks of the spell that raised the alarm are no reference for her new baseline either)."""
    detector.statistic = 0.0
    detector.base_n = dict.fromkeys(STREAMS, 0)
    detector.base_k = dict.fromkeys(STREAMS, 0.0)
    detector.tested = 0
    detector.restarts += 1
    detector.alarmed = False


def alarm(detector: RaterDetector) -> None:
    """Her episode fired: her looks so far, and those she makes until it resolves, are no
    reference for her repeats."""
    detector.alarmed = True
    detector.stale_upto = max(detector.stale_upto, detector.last_seen)


Evidence = tuple[str, str, int, int]  # (rater, stream, disagreements, comparisons)


# item -> rater -> (category, read, sequence or None)
Memory = MutableMapping[str, dict[str, tuple[str, bool, int | None]]]
Label = tuple[str, str, str] | tuple[str, str, str, int]  # item, rater, category[, sequence]


def evidence(
    labels: Iterable[Label],
    latest: Memory,
    humans: Iterable[str] | None = None,
    flagged: Callable[[str], bool] | None = None,
    stale: Callable[[str, int], int] | None = None,
) -> Iterator[Evidence]:
    """The evidence chunks of ``labels`` ((item, rater, category[, sequence]), in arrival
    order), lazily.

    ``latest`` maps item -> {rater: (her latest category, read, sequence)} for the labels read
    before; it is updated in place, so the next call goes on where this one stopped (a label is
    "read" once it gave her a group observation). ``stale(rater, sequence)``, called for each
    label that has a sequence, returns the sequence at or before which her earlier looks are
    no reference: a repeat whose first look is there gives no evidence. Only raters in
    ``humans`` (None: all) are
    compared and get evidence. A rater for whom ``flagged`` says True (her own detector is over
    its limit) is left out of the others' group evidence while she is: a degrading rater must
    not raise the statistics of her partners. Read the chunks one by one and update the
    detectors in between, so ``flagged`` sees the current state.
    """
    people = None if humans is None else set(humans)
    for label in labels:
        item, rater, category = label[0], label[1], label[2]
        sequence = label[3] if len(label) > 3 else None
        if people is not None and rater not in people:
            continue
        seen = latest.setdefault(item, {})
        before = seen.get(rater)
        cut = stale(rater, sequence) if stale is not None and sequence is not None else None
        if before is not None:
            first = before[2]
            if cut is None or first is None or first > cut:
                yield (rater, REPEAT, int(before[0] != category), 1)
        me_flagged = flagged is not None and flagged(rater)
        others = [
            (o, c, read, seq)
            for o, (c, read, seq) in seen.items()
            if o != rater and not (flagged is not None and flagged(o))
        ]
        seen[rater] = (category, bool(others), sequence)
        if others:
            yield (rater, GROUP, sum(c != category for _, c, _, _ in others), len(others))
        if me_flagged:
            continue
        for o, c, read, seq in others:  # a label that met nobody yet is read against this one
            if not read:
                seen[o] = (c, True, seq)
                yield (o, GROUP, int(c != category), 1)


def feed(
    detectors: MutableMapping[str, RaterDetector],
    labels: Iterable[Label],
    latest: Memory,
    settings: ChangeSettings,
    key: Callable[[str], str] = lambda rater: rater,
) -> int:
    """Advance ``detectors`` (keyed by ``key(rater)``, created as needed) by the evidence of
    ``labels``; the number of chunks read. Labels with a sequence (the label id, increasing)
    mark her looks made while she is over the limit as no reference for her repeats."""

    def flagged(rater: str) -> bool:
        found = detectors.get(key(rater))
        return found is not None and found.statistic >= settings.limit

    def stale(rater: str, sequence: int) -> int:
        found = detectors.get(key(rater))
        if found is None:
            return -1
        found.last_seen = max(found.last_seen, sequence)
        if found.alarmed:
            found.stale_upto = max(found.stale_upto, sequence)
        return found.stale_upto

    chunks = 0
    for rater, stream, disagreements, comparisons in evidence(labels, latest, None, flagged, stale):
        detector = detectors.get(key(rater))
        if detector is None:
            detector = detectors[key(rater)] = RaterDetector()
        update(detector, stream, disagreements, comparisons, settings)
        chunks += 1
    return chunks


def calibrate_limit(
    p0: float,
    odds_ratio: float,
    arl0: float,
    *,
    baseline: int = 400,
    runs: int = 400,
    seed: int = 0,
    grid: Iterable[float] = tuple(np.arange(2.0, 15.01, 0.25)),
    baseline_se: float = 1.0,
) -> float:
    """The smallest h on ``grid`` whose simulated in-control median run length, in
    comparisons, is at least ``arl0 * ln 2`` (a run length is nearly geometric, so its
    median is ARL ln 2), with the baseline estimated from ``baseline`` comparisons in each run.

    Runs are cut at ``2 * arl0`` comparisons (long enough to see the median).
    """
    rng = np.random.default_rng(seed)
    horizon = int(2 * arl0)
    base = rng.binomial(baseline, p0, size=runs)
    p0_hat = (base + 0.5) / (baseline + 1.0)
    p0_hat = np.minimum(
        p0_hat + baseline_se * np.sqrt(p0_hat * (1 - p0_hat) / (baseline + 1.0)), 0.99
    )
    p1_hat = p0_hat * odds_ratio / (1.0 - p0_hat + p0_hat * odds_ratio)
    up = np.log(p1_hat / p0_hat)
    down = np.log((1 - p1_hat) / (1 - p0_hat))
    limits = np.asarray(sorted(grid))
    first = np.full((runs, limits.size), horizon, dtype=np.int64)
    statistic = np.zeros(runs)
    step = 4096
    for start in range(0, horizon, step):
        size = min(step, horizon - start)
        x = rng.random((runs, size)) < p0
        increments = np.where(x, up[:, None], down[:, None])
        for j in range(size):  # the recursion max(0, S + x) is sequential
            statistic = np.maximum(0.0, statistic + increments[:, j])
            hit = statistic[:, None] >= limits[None, :]
            newly = hit & (first == horizon)
            if newly.any():
                first[newly] = start + j
    median = np.median(first, axis=0)
    for h, m in zip(limits, median, strict=True):
        if m >= arl0 * math.log(2):
            return float(h)
    return float(limits[-1])
