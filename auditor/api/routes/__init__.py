"""Route modules of the API; each exposes ``router``."""
