"""The Jinja environment and the pages: the dashboard's (served by ``auditor.web``) and the
static report, which is the dashboard's project page rendered ``standalone`` (one template,
two renderings; figures drawn here, markup in templates)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from auditor import __version__
from auditor.presentation.figures import (
    alert_timelines,
    format_measure,
    format_time,
    has_thresholds,
    headline_sentence,
    history_chart,
    legend_facts,
    measure_html,
    pair_heatmap,
    rater_sparkline,
    scope_color,
    scope_title,
    small_multiple,
    timeline_end,
)
from auditor.services.queries.attention import natural_key
from auditor.services.queries.changes import Changes
from auditor.services.queries.dashboard import ProjectDetail, RaterDetail
from auditor.stats import paradox
from auditor.stats.catalogue import BY_NAME, headline, sparkline_metric, table_columns

# The pages' stylesheet and script: served at /static by the dashboard; the stylesheet is
# inlined into the standalone report.
STATIC = Path(__file__).parent / "static"


class Renderer:
    def __init__(self) -> None:
        self.env = Environment(
            loader=PackageLoader("auditor.presentation", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["measure"] = format_measure
        self.env.filters["when"] = format_time
        self.env.globals["version"] = __version__
        self.env.globals["scope_title"] = scope_title
        self.env.globals["scope_color"] = scope_color
        self.env.globals["has_thresholds"] = has_thresholds
        # the measure cell in Python (the macro of the same name delegates to it)
        self.env.globals["measure"] = measure_html
        self.env.globals["measure_html"] = measure_html

    def page(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def project_page(
        self,
        detail: ProjectDetail,
        *,
        generated_at: datetime | None = None,
        changes: Changes | None = None,
    ) -> str:
        """The project page; with ``generated_at``, the standalone report of that moment: the
        stylesheet inline, no script, no link (see ``auditor.presentation.report``)."""
        charts = [
            (history, Markup(history_chart(history, reverts=detail.reverts)))
            for history in detail.charts
        ]
        sparklines = {row.rater: Markup(rater_sparkline(row)) for row in detail.raters}
        latest = detail.latest or {}
        ordinal = latest.get("scale") == "ordinal"
        heatmap = (
            Markup(pair_heatmap(detail.pair_labels, detail.pairs))
            if detail.pairs and detail.pair_summary is None
            else None
        )
        alerts = detail.card.alerts
        timeline = folded_timeline = None
        folded_lanes = 0
        if alerts.changes:
            active, quiet, folded_lanes = alert_timelines(alerts, timeline_end(detail))
            timeline = Markup(active) if active else None
            folded_timeline = Markup(quiet) if quiet else None
        until = detail.card.as_of or datetime.now(UTC)
        attention = [
            (
                item,
                [
                    (
                        history,
                        Markup(
                            small_multiple(
                                history,
                                item.episodes,
                                f"attn-{item.subject}-{history.metric}",
                                until,
                            )
                        ),
                    )
                    for history in item.charts
                ],
            )
            for item in detail.attention
        ]
        standalone: dict[str, Any] = {}
        if generated_at is not None:
            css = (STATIC / "dashboard.css").read_text(encoding="utf-8")
            standalone = {
                "standalone": True,
                "generated_at": format_time(generated_at),
                "inline_css": Markup(css),
            }
        cards = [m for m in headline() if not m.ordinal or ordinal]
        lead = cards[0] if cards else None
        headline_text = (
            headline_sentence(lead.short, latest.get("measures", {}).get(lead.name), lead.band)
            if lead is not None and latest
            else None
        )
        return self.page(
            "project.html",
            headline_text=headline_text,
            changes=changes,
            title=detail.card.name,
            detail=detail,
            card=detail.card,
            charts=charts,
            sparklines=sparklines,
            heatmap=heatmap,
            timeline=timeline,
            folded_timeline=folded_timeline,
            folded_lanes=folded_lanes,
            alert_states=_states_by_concern(alerts.states),
            attention=attention,
            legend=legend_facts(detail.charts),
            # The cards and table columns come from the metric catalogue, read per page; the
            # weighted coefficients and grade bias only where the snapshot has them (an
            # ordinal scale), first among the cards.
            headline=[m for m in headline() if not m.ordinal or ordinal],
            rater_columns=[m for m in table_columns("rater") if not m.ordinal or ordinal],
            paradox=paradox.sentence(latest) if latest else None,
            categories=_categories(latest),
            model_columns=table_columns("model"),
            rater_spark=BY_NAME[sparkline_metric("rater")],
            model_spark=BY_NAME[sparkline_metric("model")],
            **standalone,
        )

    def raters_page(self, detail: ProjectDetail) -> str:
        """Every rater of the project (``project_detail(..., all_raters=True)``): the table
        and the pairwise summary of the project page, every row."""
        ordinal = (detail.latest or {}).get("scale") == "ordinal"
        return self.page(
            "raters.html",
            title=f"Raters of {detail.card.name}",
            detail=detail,
            card=detail.card,
            sparklines={row.rater: Markup(rater_sparkline(row)) for row in detail.raters},
            heatmap=(
                Markup(pair_heatmap(detail.pair_labels, detail.pairs))
                if detail.pairs and detail.pair_summary is None
                else None
            ),
            rater_columns=[m for m in table_columns("rater") if not m.ordinal or ordinal],
            model_columns=table_columns("model"),
            rater_spark=BY_NAME[sparkline_metric("rater")],
            model_spark=BY_NAME[sparkline_metric("model")],
        )

    def rater_page(self, detail: RaterDetail) -> str:
        charts = [(history, Markup(history_chart(history))) for history in detail.charts]
        return self.page(
            "rater.html",
            title=f"{detail.rater} in {detail.project.name}",
            detail=detail,
            card=detail.project,
            charts=charts,
            sparkline=Markup(rater_sparkline(detail.row)),
            legend=legend_facts(detail.charts),
        )


def _states_by_concern(states: Any) -> tuple[list[Any], list[Any]]:
    """The alert states table: firing, pending and insufficient data first (then by rule and
    subject, naturally), and apart the "ok" ones, folded on the page."""
    order = {"firing": 0, "pending": 1, "insufficient_data": 2}
    ranked = sorted(
        states, key=lambda s: (order.get(s.state, 3), s.rule, natural_key(s.subject or ""))
    )
    return [s for s in ranked if s.state != "ok"], [s for s in ranked if s.state == "ok"]


def _categories(latest: dict[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """(category, its share, agreement on it) of a snapshot, in the project's order; empty for
    a snapshot older than these measures."""
    measures = (latest or {}).get("measures", {})
    shares = measures.get("category_share")
    specific = measures.get("specific_agreement", {})
    if not isinstance(shares, dict):
        return []
    return [(name, share, specific.get(name)) for name, share in shares.items()]
