"""Ratings: ``services`` (openskill updates per match, the leaderboards, who is rated)."""
