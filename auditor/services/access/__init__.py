"""Who may do what: API keys, dashboard sessions, loopback clients, opaque public ids."""
