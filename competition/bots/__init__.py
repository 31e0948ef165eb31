"""The bots' domain on the platform's side, called by the web, the API and the admin; the events
react to it through ``signals``."""
