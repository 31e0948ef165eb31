"""The Django project package and main app. Importing it configures the Celery app, so
``shared_task`` dispatches through the project's broker."""

from competition.celery import app as celery_app

__all__ = ["celery_app"]
