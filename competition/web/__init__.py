"""The server-rendered site: pages (``views``, ``lists``, ``accounts``, ``bots``, ``play``,
``docs``, ``fork``, ``presenter``, ``screen``, ``share``, ``notifications``), ``forms``, ``rows``,
``urls``, and the websocket ``consumers`` with their ``routing``."""
