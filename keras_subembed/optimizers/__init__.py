"""Optimizers for training compressed embeddings beside pretrained weights."""

from keras_subembed.optimizers.build_optimizer_before_fit import build_optimizer_before_fit
from keras_subembed.optimizers.layer_rate_adamw import LayerRateAdamW

__all__ = ["LayerRateAdamW", "build_optimizer_before_fit"]
