"""keras-hub's RoBERTa masked LM, paired with the compressed backbone."""

import keras
import keras_hub

from keras_subembed.models.families.compressed_roberta_backbone import CompressedRobertaBackbone
from keras_subembed.models.families.compressed_roberta_masked_lm_preprocessor import (
    CompressedRobertaMaskedLMPreprocessor,
)
from keras_subembed.models.files.presets import save_to_preset
from keras_subembed.optimizers.build_optimizer_before_fit import build_optimizer_before_fit


@keras.saving.register_keras_serializable(package="keras_subembed")
class CompressedRobertaMaskedLM(keras_hub.models.RobertaMaskedLM):
    """`keras_hub.models.RobertaMaskedLM` for a `CompressedRobertaBackbone`.

    A thin subclass: the model is keras-hub's own (its `MaskedLMHead` is
    tied to `backbone.token_embedding` through `reverse=True`, loss and
    weighted accuracy from `keras_hub.models.MaskedLM.compile`). It only
    pairs the task with this package's backbone and WordPiece preprocessor
    (so `from_config` and `.keras` loading restore the right classes) and
    checks that the tokenizer's vocabulary matches the embedding's -- a
    mismatch would otherwise train silently on wrong ids.

    Example:
    ```python
    from keras_subembed.datasets import minilm_vocabulary
    preprocessor = CompressedRobertaMaskedLMPreprocessor.from_vocabulary(
        minilm_vocabulary())
    backbone = CompressedRobertaBackbone(
        vocabulary_size=preprocessor.tokenizer.vocabulary_size(), num_layers=2,
        num_heads=4, hidden_dim=128, intermediate_dim=256, embedding="sub")
    masked_lm = CompressedRobertaMaskedLM(backbone, preprocessor)
    masked_lm.compile(optimizer=keras.optimizers.AdamW(5e-4))
    masked_lm.fit(text_dataset, epochs=1)
    ```
    """

    backbone_cls = CompressedRobertaBackbone
    preprocessor_cls = CompressedRobertaMaskedLMPreprocessor
    save_to_preset = save_to_preset

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # A tokenizer being restored from a .keras file gets its vocabulary
        # (an asset) after construction; it was checked when first built.
        if preprocessor is not None and preprocessor.tokenizer.vocabulary is not None:
            tokenizer_size = preprocessor.tokenizer.vocabulary_size()
            if tokenizer_size != backbone.vocabulary_size:
                raise ValueError(
                    f"The tokenizer's vocabulary ({tokenizer_size} tokens) does not "
                    f"match the backbone's token embedding ({backbone.vocabulary_size} "
                    "ids). Build the backbone with "
                    "vocabulary_size=preprocessor.tokenizer.vocabulary_size()."
                )
        super().__init__(backbone, preprocessor=preprocessor, **kwargs)

    def fit(self, *args, **kwargs):
        build_optimizer_before_fit(self)  # one trace of the step, not two
        return super().fit(*args, **kwargs)
