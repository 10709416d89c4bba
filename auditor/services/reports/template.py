# ruff: noqa: E501  (HTML and CSS lines; wrapping them would change the markup)
"""The report's HTML template and stylesheet, inlined so the report is one file."""

from __future__ import annotations

from jinja2 import Environment, select_autoescape
from markupsafe import Markup

from auditor import __version__
from auditor.services.reports.figures import (
    format_measure,
    format_time,
    has_thresholds,
    scope_color,
    scope_title,
)

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px;
  border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.muted { color: #666; } .undefined { color: #999; font-style: italic; }
.empty { background: #fff8e1; border: 1px solid #f0d98c; padding: 8px 12px; }
table.data { border-collapse: collapse; }
table.data th, table.data td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
table.data th { background: #f2f4f7; } td.num { text-align: right; white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 14px; }
figure { margin: 0; border: 1px solid #e0e0e0; padding: 8px; page-break-inside: avoid; }
figure[data-figure] { max-width: 640px; }
figcaption { font-weight: 600; }
.legend { font-size: 12px; color: #444; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.swatch { display: inline-block; width: 18px; height: 10px; margin-right: 4px; }
.swatch.line { height: 0; border-top: 3px solid; width: 24px; vertical-align: middle; }
.swatch.line.dashed { border-top-style: dashed; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; }
.card { border: 1px solid #e0e0e0; padding: 6px 10px; } .card .value { font-size: 18px; font-weight: 600; }
.state { padding: 1px 8px; border-radius: 10px; font-size: 12px; color: white; background: #777; }
.state.firing { background: #d62728; } .state.pending { background: #ff9f1c; }
.state.ok { background: #2ca02c; } .state.insufficient_data { background: #9e9e9e; }
"""

SOURCE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{ card.name }}: reliability report</title>
<style>{{ css }}</style></head>
<body>
{% macro measure(m) -%}
{% if m and m.value is not none %}<span{% if m.ci_reason and m.ci_low is none %} title="no interval: {{ m.ci_reason }}"{% endif %}>{{ m | measure }}</span>{% elif m %}<span class="undefined">undefined{% if m.reason %}: {{ m.reason }}{% endif %}</span>{% else %}<span class="undefined">not measured</span>{% endif %}
{%- endmacro %}
<h1>{{ card.name }} <span class="muted">({{ card.slug }})</span></h1>
<p class="muted">Reliability report generated {{ generated_at }} by auditor {{ version }}.
{{ card.counts.labels }} labels of {{ card.counts['items'] }} items by {{ card.counts.raters }} raters.</p>
{% set latest = detail.latest %}
{% if not latest %}
<p class="empty">No snapshots yet: nothing has been measured for this project.</p>
{% else %}
{% set meta = latest.snapshot %}
<p class="muted">Latest snapshot: {{ meta.as_of | when }}, {{ latest.n_labels }} labels (watermark {{ meta.watermark }}),
intervals {{ meta.interval_method }} at {{ (meta.interval_level * 100) | round | int }}%.</p>
<div class="cards">
{% for metric, label in [("kappa_s", "kappa_S"), ("rho", "rho (reliability-weighted agreement)"), ("fleiss_kappa", "Fleiss' kappa"), ("krippendorff_alpha", "Krippendorff's alpha"), ("mean_self_agreement", "mean self-agreement")] %}
<div class="card"><div class="muted">{{ label }}</div><div class="value">{{ measure(latest.measures.get(metric)) }}</div>
{% if detail.latest_window %}<div class="muted">{{ scope_title(detail.window_scope) }}: {{ measure(detail.latest_window.measures.get(metric)) }}</div>{% endif %}</div>
{% endfor %}
</div>
<h2>History</h2>
<div class="charts">
{% for history, svg in charts %}
<figure data-figure="{{ history.metric }}"><figcaption>{{ history.title }}</figcaption>{{ svg | safe }}
<div class="legend">{% for s in history.series %}<span data-legend-series="{{ s.scope }}"><span class="swatch line{% if not loop.first %} dashed{% endif %}" style="border-top-color: {{ scope_color(loop.index0) }}"></span>{{ scope_title(s.scope) }} ({{ s.points | length }} snapshots)</span>{% endfor %}
<span>shaded: interval;{% if has_thresholds(history.metric) %} dashed red: 0.667 (tentative) and 0.800 (reliable);{% endif %} hollow marker: undefined</span></div></figure>
{% endfor %}
</div>
<h2>Raters</h2>
<table class="data"><thead><tr><th>Rater</th><th>Self-agreement</th><th>Reliability</th><th>Random-choice share</th><th>S against the group</th><th>Repeated items</th><th>Items compared</th><th>Trend</th></tr></thead><tbody>
{% for row in detail.raters if row.kind == "human" %}
<tr><td>{{ row.rater }}</td>
{% if not row.n_repeated_items %}<td colspan="3" class="undefined">no repeated presentations yet: self-agreement needs an item shown twice to the same rater</td>
{% else %}<td class="num">{{ measure(row.measures.get("self_agreement")) }}</td><td class="num">{{ measure(row.measures.get("reliability")) }}</td><td class="num">{{ measure(row.measures.get("random_choice")) }}</td>{% endif %}
<td class="num">{{ measure(row.measures.get("s_vs_group")) }}</td><td class="num">{{ row.n_repeated_items or 0 }}</td>
<td class="num">{{ row.measures.get("s_vs_group", {}).get("n") or 0 }}</td><td>{{ sparklines[row.rater] | safe }}</td></tr>
{% endfor %}
</tbody></table>
{% for row in detail.raters if row.kind == "model" %}
<p>Model {{ row.rater }}: S against the humans {{ measure(row.measures.get("s")) }}, kappa_VA {{ measure(row.measures.get("kappa_va")) }}.</p>
{% endfor %}
<h2>Pairwise Cohen's kappa</h2>
{% if heatmap %}<figure>{{ heatmap | safe }}</figure>{% else %}<p class="empty">No pairs yet: Cohen's kappa needs two raters who labeled the same items.</p>{% endif %}
{% endif %}
<h2>Alerts</h2>
{% if not card.alerts.configured %}<p class="empty">{{ card.alerts.message }}</p>
{% else %}
<table class="data"><thead><tr><th>Rule</th><th>Subject</th><th>State</th><th>Since</th><th>Value</th><th>Why</th></tr></thead><tbody>
{% for s in card.alerts.states %}<tr><td>{{ s.rule }}</td><td>{{ s.subject }}</td><td><span class="state {{ s.state }}">{{ s.state }}</span></td><td>{{ s.since | when }}</td>
<td class="num">{{ "undefined" if s.value is none else "%.3f" | format(s.value) }}</td><td>{{ s.reason or "" }}</td></tr>{% endfor %}
</tbody></table>
{% if timeline %}<figure>{{ timeline | safe }}</figure>{% endif %}
{% endif %}
</body></html>
"""


def _environment() -> Environment:
    env = Environment(autoescape=select_autoescape(default=True), trim_blocks=True)
    env.filters["measure"] = format_measure
    env.filters["when"] = format_time
    env.globals.update(
        version=__version__,
        scope_title=scope_title,
        scope_color=scope_color,
        has_thresholds=has_thresholds,
        css=Markup(CSS),
    )
    return env


TEMPLATE = _environment().from_string(SOURCE)
