"""What every compressed keras-hub `TextEmbedder` adds to keras-hub's own.

Each supported encoder family has its class, in a file of its own:
`CompressedBertTextEmbedder` (BERT, MiniLM) and
`CompressedXLMRobertaTextEmbedder`. keras-hub's
`TextEmbedder.from_preset(folder)` picks the task class whose `backbone_cls`
is exactly the class in the folder's `config.json`; these classes are what
lets a saved compressed embedder load back through keras-hub's own doors
(`keras_hub.models.TextEmbedder.from_preset`,
`keras_hub.models.BertTextEmbedder.from_preset`) once `keras_subembed` is
imported.
"""

import keras
import numpy as np

from keras_subembed.files import vocabulary_fingerprint
from keras_subembed.layers.compressed_embedding import remember_model
from keras_subembed.models.families.backbone_weights import check_preset_weights
from keras_subembed.models.encoding.encoder_inputs import check_id_batch
from keras_subembed.models.encoding.encoder_inputs import check_input_names
from keras_subembed.models.encoding.encoder_inputs import check_sentences
from keras_subembed.models.encoding.encoder_inputs import is_token_id_dict
from keras_subembed.models.encoding.encoder_inputs import narrow_ids
from keras_subembed.models.encoding.length_batches import encode_by_length
from keras_subembed.models.files.model_files import check_tokenizer_fits
from keras_subembed.models.files.model_files import keep_model_sequence_length
from keras_subembed.models.files.presets import save_to_preset


def tokenizer_fingerprint(preprocessor):
    """SHA-256 of the preprocessor's vocabulary (as the export records it), or None."""
    vocabulary = getattr(getattr(preprocessor, "tokenizer", None), "vocabulary", None)
    return vocabulary_fingerprint(vocabulary) if vocabulary else None  # ~1 ms for 30k tokens


def check_saved_vocabulary(preprocessor, vocabulary_sha256):
    """`ValueError` when the tokenizer's vocabulary is not the one the model was
    saved with (a preset whose vocabulary file was replaced, even by one of the
    same size, would silently give other tokens' vectors)."""
    found = tokenizer_fingerprint(preprocessor)
    if vocabulary_sha256 is None or found is None or found == vocabulary_sha256:
        return
    raise ValueError(
        f"The tokenizer's vocabulary (sha256 {found[:12]}) is not the one this model was "
        f"saved with (sha256 {vocabulary_sha256[:12]}): its ids would pick other tokens' "
        "vectors. Restore the preset's own vocabulary file."
    )


def check_text_preprocessing(preprocessor, backbone, vocabulary_sha256):
    """What text must meet before `predict` tokenizes it: a vocabulary that fits
    the embedding and is the one saved with the model, and a padded length the
    position table holds (else a graph error deep in the backbone)."""
    check_tokenizer_fits(preprocessor, backbone)
    check_saved_vocabulary(preprocessor, vocabulary_sha256)
    limit = getattr(backbone, "max_sequence_length", None)
    length = getattr(preprocessor, "sequence_length", None)
    if isinstance(limit, int) and isinstance(length, int) and length > limit:
        raise ValueError(
            f"The preprocessor pads text to {length} tokens; the model takes at most "
            f"{limit} (its `max_sequence_length`). Set `preprocessor.sequence_length` "
            f"to {limit} or less."
        )


class CompressedTextEmbedder:
    """What every compressed family's `TextEmbedder` adds to keras-hub's own.

    Not a base class: a family's class extends one keras-hub embedder only
    and takes these methods with the `compressed_text_embedder` decorator.
    keras-hub names a preset's task by its class's first base, and Keras'
    functional set-up cannot take a second path from a class to
    `keras.Model`, so neither a first nor a second base could carry them.

    What it adds: inputs checked before tracing. Ids outside the vocabulary
    or int32, a bad padding mask, unknown input names or a value that is not
    a sentence get a `ValueError`/`TypeError` naming them instead of a deep
    trace or a silently wrong vector; token ids go straight in even when the
    model has a preprocessor, and BERT's `segment_ids` may be left out (one
    sentence is segment 0, as in the exported signature). Presets are saved
    by `keras_subembed.models.save_preset`; a local preset's missing weights
    file is named on loading.
    """

    def __init__(self, backbone, preprocessor=None, vocabulary_sha256=None, **kwargs):
        check_tokenizer_fits(preprocessor, backbone)
        super(self.compressed_class, self).__init__(backbone, preprocessor=preprocessor, **kwargs)
        # A preset saved later keeps this length, not an evaluation's.
        keep_model_sequence_length(preprocessor)
        # The vocabulary the model was saved with: a preset loads its
        # vocabulary after the model is built, so text checks it then.
        self.vocabulary_sha256 = vocabulary_sha256
        remember_model(self)  # `freeze` and `fake_quantized` retrace its steps

    def get_config(self):
        config = super(self.compressed_class, self).get_config()
        config["vocabulary_sha256"] = tokenizer_fingerprint(self.preprocessor) or (
            self.vocabulary_sha256)
        return config

    save_to_preset = save_to_preset

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """The embedder in a preset folder (keras-hub's `from_preset`); a
        missing `model.weights.h5` is named."""
        return super(cls.compressed_class, cls).from_preset(
            preset, load_weights=check_preset_weights(preset, load_weights), **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        return super(self.compressed_class, self).__call__(
            self._with_segments(inputs), *args, **kwargs)

    def call(self, inputs, training=None, mask=None):
        # JAX's compiled steps reach `call` without `__call__`.
        inputs = narrow_ids(self._with_segments(inputs))
        return super(self.compressed_class, self).call(inputs, training=training, mask=mask)

    def preprocess_samples(self, x, y=None, sample_weight=None):
        if is_token_id_dict(x):
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        return super(self.compressed_class, self).preprocess_samples(x, y, sample_weight)

    def predict(self, x=None, *args, **kwargs):
        return super(self.compressed_class, self).predict(self._checked_inputs(x), *args, **kwargs)

    def encode_text(self, text, batch_size=32, verbose=None):
        """keras-hub's `encode_text` batched by length (`encode_by_length`):
        `predict`'s vectors without padding short texts to `sequence_length`."""
        del verbose  # no progress bar to show
        return encode_by_length(self, self._checked_inputs(text), batch_size=batch_size)

    def _checked_inputs(self, x):
        """`x` (one sentence becomes a list of one) once every check has passed."""
        if isinstance(x, (str, bytes)):
            x = [x]
        check_sentences(x, self.preprocessor)
        if not isinstance(x, dict):  # text: the preprocessor's ids reach the model
            check_text_preprocessing(self.preprocessor, self.backbone,
                                     self.vocabulary_sha256)
        check_input_names(x, self.input)
        limit = getattr(self.backbone, "max_sequence_length", None)
        check_id_batch(x, self.backbone.token_embedding.input_dim,
                       limit if isinstance(limit, int) else None)
        return x

    def _with_segments(self, inputs):
        if not (isinstance(inputs, dict) and "segment_ids" in self.input
                and "segment_ids" not in inputs and "token_ids" in inputs):
            return inputs
        token_ids = inputs["token_ids"]
        zeros = (np.zeros_like(token_ids) if isinstance(token_ids, np.ndarray)
                 else keras.ops.zeros_like(token_ids))  # Keras refuses a mix of the two
        return {**inputs, "segment_ids": zeros}


def compressed_text_embedder(cls):
    """Class decorator: `cls`, a subclass of one keras-hub `TextEmbedder`, with
    the methods of `CompressedTextEmbedder` in front of keras-hub's.

    They reach keras-hub's methods through `super(cls.compressed_class, ...)`,
    so a subclass of `cls` may override them and call `super()` as usual.
    """
    cls.compressed_class = cls
    for name, value in vars(CompressedTextEmbedder).items():
        if name not in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"):
            setattr(cls, name, value)
    return cls
