"""Celery shell: the app, its beat schedule and tasks that take ids and call one service.

``celery -A workers worker`` and ``celery -A workers beat`` find ``app`` here.
"""

from workers import heartbeat as heartbeat
from workers import tasks as tasks
from workers.celery_app import app

__all__ = ["app", "heartbeat", "tasks"]
