"""`compress`: a keras-hub text embedder or backbone copied into its compressed family,
every weight but the token table copied exactly."""
