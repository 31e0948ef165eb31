"""The REST API (DRF + drf-spectacular), mounted at ``/api/`` (DESIGN.md §5).

Views are thin: querysets decide visibility, serializers validate input, services act.
"""
