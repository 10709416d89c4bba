"""Recomputing agreement: the scan for dirty projects, the recompute of one project into
snapshots, its health record, and the embedded in-process loop."""
