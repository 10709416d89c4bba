"""Read models: metric history, snapshots, API lists, the dashboard's page data, Prometheus."""
