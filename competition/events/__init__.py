"""Events: pairing decisions (``pairing``, pure) and their persistence (``services``)."""
