"""Matches: the match loop, their lifecycle, the turn writer, the presenters and the dispatch
seam."""
