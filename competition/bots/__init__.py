"""The bots' domain on the platform's side (not the ``bots`` app): ``services`` (status, health,
the test call, versions), ``signals`` (the events react to them) and ``messages`` (a bot's
messages as a person reads them); called by the web, the API and the admin."""
