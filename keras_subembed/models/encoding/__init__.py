"""Running a text encoder: the inputs it takes (token ids, padding mask, sentences,
checked), the sentence vectors its head makes, and texts encoded in batches cut to
their length."""
