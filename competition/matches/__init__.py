"""Matches: the loop, the lifecycle, the turn writer, the presenters, the dispatch seam."""
