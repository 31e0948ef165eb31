"""The API's serializers, one module per domain as its views: input validation and every
response's documented shape; shapes the services build (``match_json``, ``standings``) are
declared here and filled from them."""
