"""Ratings: Glicko-2 updates and the leaderboards (``services``)."""
