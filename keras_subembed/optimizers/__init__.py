"""Optimizers for training compressed embeddings beside pretrained weights."""

from keras_subembed.optimizers.layer_rate_adamw import LayerRateAdamW

__all__ = ["LayerRateAdamW"]
