"""Projects, their category vocabulary and their settings."""
