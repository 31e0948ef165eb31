"""The REST API at ``/api/`` (DRF): ``views``, ``serializers``, ``permissions``, ``pagination``,
``parsers``, ``throttles``, ``exceptions``, the OpenAPI ``schema``, ``simulation`` (the engine
endpoint's replay) and ``websocket_schemas`` (the live protocol's JSON Schemas)."""
