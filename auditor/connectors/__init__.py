"""Calls out to the labeling tools a project reads from (a component beside
``auditor.notifiers``): Label Studio's API for the sync, predictions and repeat tasks."""
