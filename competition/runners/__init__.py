"""What runs matches: the embedded scheduler, the Celery task, and the code path they share in
``play``."""
