"""A user's account as theirs: deleting it (``deletion``) and downloading everything about
them (``export``)."""
