"""``auditor demo`` shows alerts firing on the degrading rater only and resolving after she is
retrained, delivered through the real outbox and sender. (Its run time, the README's
"5-20 s", is measured by benchmarks/demo.py: a wall-clock bound here would fail on a loaded
machine and says nothing about the behaviour.)"""

from __future__ import annotations

import re

from tests.demo_run import DemoRun

NOTICE = re.compile(r"^  (\S+ \S+)  (FIRING|RESOLVED|REPEAT)\s+(\S+) \((\S+)\) (\S+) = ", re.M)


def test_demo_fires_on_the_degrading_rater_and_resolves(pinned_demo: DemoRun) -> None:
    stdout = pinned_demo.stdout  # the session's run of the pinned demo (seed 7, the default)
    notices = NOTICE.findall(stdout)
    rater_vs_group = [(when, kind, subject) for when, kind, metric, _, subject in notices
                      if metric == "s_vs_group"]  # fmt: skip
    # exactly one episode, for r07 only: it fires after she degrades and resolves after
    # she is retrained
    assert [(k, s) for _, k, s in rater_vs_group] == [
        ("FIRING", "rater:r07"),
        ("RESOLVED", "rater:r07"),
    ]
    fired, resolved = (when for when, _, _ in rater_vs_group)
    days = stdout.split("History at the end of each day")[1]
    degrade_day = int(re.search(r"^\s*(\d+) .*<- degradation starts", days, re.M).group(1))
    retrained_day = int(re.search(r"^\s*(\d+) .*<- retrained", days, re.M).group(1))
    day_of = lambda when: int(when[8:10]) - 3  # 24 days ending 2024-03-28: day 1 is 03-04  # noqa: E731
    assert degrade_day <= day_of(fired) < retrained_day < day_of(resolved)
    # issue 21: the only episodes are r07's (no kappa_S or rho at the start, no stable rater),
    # and her change detector fires on the day she degrades
    assert {subject for _, kind, _, _, subject in notices if kind == "FIRING"} == {"rater:r07"}
    change = [w for w, k, metric, _, _ in notices if (k, metric) == ("FIRING", "rater_change")]
    assert len(change) == 1 and day_of(change[0]) == degrade_day
