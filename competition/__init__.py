"""The Django project package and main app.

The Celery app (``competition.celery``) is not imported here: only the scale-out runner needs
it, and it costs half a second of imports in every process (web, runners, built-in bot
servers, commands). ``competition.runners.tasks`` imports it, so dispatching a task always goes
through the project's broker; ``celery -A competition`` finds it as ``competition.celery``.
"""
