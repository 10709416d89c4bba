"""Celery shell: the app, its beat schedule and tasks that take ids and call one service."""
