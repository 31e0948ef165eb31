"""The server-rendered site."""
