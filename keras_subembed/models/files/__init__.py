"""A model's folders: reading a Hugging Face / keras-hub model folder (its normaliser,
length limit, pooling) and saving presets without replacing a user's files."""
