"""Fitting a compressed model to text: `EmbeddingDistiller` and its batches
(`distillation_dataset`), and the per-token weights that fit codes to a text's tokens
(`token_weights`)."""
