"""The REST API (DRF + drf-spectacular), mounted at ``/api/`` (docs/architecture.md).

Views are thin: querysets decide visibility, serializers validate input, services act.
"""
