"""The bots' domain on the platform's side: status and health, the test call, uploaded
versions (``services``), and how a message reads (``messages``). The web pages, the API and
the admin call it; it sits below them and below the events (which react to a bot made active
through ``signals.bot_activated``)."""
