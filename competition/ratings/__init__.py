"""Ratings: openskill updates and the leaderboards (``services``)."""
