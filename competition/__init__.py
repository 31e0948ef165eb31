"""The Django project package and main app.

The Celery app is not imported here: only the scale-out runner needs it, and its imports cost
half a second in every process."""
