"""The REST API (DRF + drf-spectacular), mounted at ``/api/``: querysets decide visibility,
serializers validate, services act."""
