from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.alerting import RetryPolicy, backoff_delay, next_attempt_at
from tests.unit.alerting.support import T0

POLICY = RetryPolicy(base=timedelta(seconds=2), cap=timedelta(seconds=60), max_attempts=5)


def test_full_jitter_ceiling_doubles_up_to_the_cap():
    almost_one = 1 - 1e-12
    ceilings = [backoff_delay(k, POLICY, almost_one).total_seconds() for k in range(1, 8)]
    assert ceilings == pytest.approx([2, 4, 8, 16, 32, 60, 60], abs=1e-6)
    assert backoff_delay(3, POLICY, 0.0) == timedelta(0)  # full jitter reaches zero
    assert backoff_delay(3, POLICY, 0.5) == timedelta(seconds=4)


def test_huge_attempt_counts_do_not_overflow():
    assert backoff_delay(10_000, POLICY, 0.5) == timedelta(seconds=30)


def test_dead_letter_after_max_attempts():
    assert next_attempt_at(4, POLICY, T0, 0.5) == T0 + timedelta(seconds=8)
    assert next_attempt_at(5, POLICY, T0, 0.5) is None
    assert next_attempt_at(6, POLICY, T0, 0.5) is None


@given(attempts=st.integers(1, 200), draw=st.floats(0, 1, exclude_max=True))
def test_delay_is_within_zero_and_the_cap(attempts, draw):
    delay = backoff_delay(attempts, POLICY, draw)
    assert timedelta(0) <= delay <= POLICY.cap


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base": timedelta(0)}, "base"),
        ({"base": timedelta(seconds=10), "cap": timedelta(seconds=5)}, "cap"),
        ({"max_attempts": 0}, "max_attempts"),
    ],
)
def test_bad_policies_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RetryPolicy(**kwargs)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="attempts_made"):
        backoff_delay(0, POLICY, 0.5)
    with pytest.raises(ValueError, match="draw"):
        backoff_delay(1, POLICY, 1.0)
