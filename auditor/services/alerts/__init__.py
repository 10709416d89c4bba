"""Alerts: rules, channels and silences (managed by people), rule evaluation after each
snapshot (called by the recompute), the outbox sender, history, and the demo's alerts.

Modules: ``rules``, ``channels``, ``silences`` (one unit of work per function), ``reads``
(states and history), ``evaluation`` (called by the recompute inside its write
transaction), ``delivery`` (the sender), ``demo``; ``common`` (project lookup, names) and
``values`` (stored records <-> ``auditor.alerting`` values) serve them. Nothing is imported
here: importing the package has no side effect.
"""
