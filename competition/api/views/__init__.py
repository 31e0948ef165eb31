"""The API's views, one module per domain (as ``competition/web``): querysets decide
visibility, serializers validate, services act."""
