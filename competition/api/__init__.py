"""The REST API at ``/api/``: querysets decide visibility, serializers validate, services act."""
