"""The Label Studio integration: its settings, the webhook, the sync, refused calls, and hidden
repeats as Label Studio tasks (docs/integrations.md)."""
