"""The demo: a simulated labeling project recomputed on a schedule."""
