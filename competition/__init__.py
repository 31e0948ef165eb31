"""The Django project package and main app; the Celery app is not imported here, saving its imports
in every process."""
