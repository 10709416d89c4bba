"""Getting labels in: batches, API posts with idempotency keys, staged file imports, Label
Studio events, and imports as things a team can list and undo."""
