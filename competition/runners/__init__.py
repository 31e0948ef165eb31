"""What runs matches: the embedded scheduler, the Celery task, and ``play``, which they share."""
