"""What runs matches: ``embedded`` (the scheduler), ``fleet`` (the runner processes of ``manage.py
serve``), ``tasks`` (Celery) and ``play`` (claim, play, record, finish: the path they share)."""
