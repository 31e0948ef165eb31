"""The Django project package and main app (the Celery app is imported only where needed)."""
