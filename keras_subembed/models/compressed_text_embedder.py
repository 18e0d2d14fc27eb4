"""keras-hub `TextEmbedder`s whose encoder has a compressed token embedding.

For each keras-hub sentence embedder of a supported encoder family
(`BertTextEmbedder`: BERT, MiniLM; `XLMRobertaTextEmbedder`) this module
registers a pair of subclasses: `Compressed<Family>Backbone` (a
`CompressedBackbone` of that family) and `Compressed<Family>TextEmbedder`
(keras-hub's embedder, unchanged but for `backbone_cls`). keras-hub's
`TextEmbedder.from_preset(folder)` picks the task class whose `backbone_cls`
is exactly the class in the folder's `config.json`; these pairs are what
lets a saved compressed embedder load back through keras-hub's own doors
(`keras_hub.models.TextEmbedder.from_preset`,
`keras_hub.models.BertTextEmbedder.from_preset`) once `keras_subembed` is
imported.
"""

import keras
import keras_hub
import numpy as np

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int
from keras_subembed.files import vocabulary_fingerprint
from keras_subembed.models.compressed_backbone import CompressedBackbone
from keras_subembed.models.compressed_backbone import compress_backbone
from keras_subembed.models.compressed_backbone import register_compressed_backbone_class
from keras_subembed.models.encoder_inputs import check_input_names
from keras_subembed.models.encoder_inputs import check_id_batch
from keras_subembed.models.encoder_inputs import check_sentences
from keras_subembed.models.encoder_inputs import is_token_id_dict
from keras_subembed.models.encoder_inputs import narrow_ids
from keras_subembed.models.length_batches import encode_by_length
from keras_subembed.models.model_files import check_tokenizer_fits
from keras_subembed.models.model_files import keep_model_sequence_length
from keras_subembed.models.presets import save_to_preset


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


def _compressed_family(task_cls):
    """Registers and returns `(Compressed<Backbone>, Compressed<Task>)` for `task_cls`."""
    source_cls = task_cls.backbone_cls
    backbone_cls = type(
        f"Compressed{source_cls.__name__}",
        (CompressedBackbone,),
        {
            "__module__": __name__,
            "__doc__": f"A `CompressedBackbone` made from a keras-hub `{source_cls.__name__}`.",
        },
    )

    # keras-hub's class its only base: preset metadata names a task by its base.
    class CompressedTextEmbedder(task_cls):
        """keras-hub's embedder over a compressed backbone, found by its `from_preset`.

        What it adds: inputs checked before tracing. Ids outside the vocabulary
        or int32, a bad padding mask, unknown input names or a value that is
        not a sentence get a `ValueError`/`TypeError` naming them instead of a
        deep trace or a silently wrong vector; token ids go straight in even
        when the model has a preprocessor, and BERT's `segment_ids` may be
        left out (one sentence is segment 0, as in the exported signature).
        """

        def __init__(self, backbone, preprocessor=None, vocabulary_sha256=None, **kwargs):
            check_tokenizer_fits(preprocessor, backbone)
            super().__init__(backbone, preprocessor=preprocessor, **kwargs)
            # A preset saved later keeps this length, not an evaluation's.
            keep_model_sequence_length(preprocessor)
            # The vocabulary the model was saved with: a preset loads its
            # vocabulary after the model is built, so text checks it then.
            self.vocabulary_sha256 = vocabulary_sha256

        def get_config(self):
            config = super().get_config()
            config["vocabulary_sha256"] = tokenizer_fingerprint(self.preprocessor) or (
                self.vocabulary_sha256)
            return config

        save_to_preset = save_to_preset

        def __call__(self, inputs, *args, **kwargs):
            return super().__call__(self._with_segments(inputs), *args, **kwargs)

        def call(self, inputs, training=None, mask=None):
            # JAX's compiled steps reach `call` without `__call__`.
            inputs = narrow_ids(self._with_segments(inputs))
            return super().call(inputs, training=training, mask=mask)

        def preprocess_samples(self, x, y=None, sample_weight=None):
            if is_token_id_dict(x):
                return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
            return super().preprocess_samples(x, y, sample_weight)

        def predict(self, x=None, *args, **kwargs):
            return super().predict(self._checked_inputs(x), *args, **kwargs)

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

    name = f"Compressed{task_cls.__name__}"
    CompressedTextEmbedder.__name__ = CompressedTextEmbedder.__qualname__ = name
    CompressedTextEmbedder.__module__ = __name__
    CompressedTextEmbedder.backbone_cls = backbone_cls
    for cls in (backbone_cls, CompressedTextEmbedder):
        keras.saving.register_keras_serializable(package="keras_subembed")(cls)
    register_compressed_backbone_class(source_cls, backbone_cls)
    return backbone_cls, CompressedTextEmbedder


CompressedBertBackbone, CompressedBertTextEmbedder = _compressed_family(
    keras_hub.models.BertTextEmbedder)
CompressedXLMRobertaBackbone, CompressedXLMRobertaTextEmbedder = _compressed_family(
    keras_hub.models.XLMRobertaTextEmbedder)
# keras-hub's embedder class -> the compressed one.
COMPRESSED_TEXT_EMBEDDERS = {
    keras_hub.models.BertTextEmbedder: CompressedBertTextEmbedder,
    keras_hub.models.XLMRobertaTextEmbedder: CompressedXLMRobertaTextEmbedder,
}


def compressed_embedder_class(embedder):
    """The compressed class for a keras-hub embedder (or a compressed one), else TypeError."""
    for source_cls, compressed_cls in COMPRESSED_TEXT_EMBEDDERS.items():
        if type(embedder) in (source_cls, compressed_cls):
            return compressed_cls
    supported = ", ".join(cls.__name__ for cls in COMPRESSED_TEXT_EMBEDDERS)
    raise TypeError(
        f"Cannot compress a {type(embedder).__name__}: supported TextEmbedders are "
        f"{supported} (and their compressed versions). Compress the backbone of "
        "another model with `compress(model.backbone, ...)`."
    )


def compress_text_embedder(
    embedder, embedding="sub", embedding_kwargs=None, verbose=False, max_sequence_length=None
):
    """A keras-hub `TextEmbedder` with its backbone's token table compressed.

    The backbone goes through `compress_backbone` (every other weight
    copied); the preprocessor and the pooling (`pooling_mode`, `normalize`)
    are the embedder's own. A `BertTextEmbedder` comes back as a
    `CompressedBertTextEmbedder` (a `BertTextEmbedder` subclass), and so on.

    Example:
    >>> embedder = keras_hub.models.TextEmbedder.from_preset(minilm_preset_dir())
    >>> small = compress_text_embedder(embedder, "sub", {"assignment": "product",
    ...     "num_tables": 32, "rows_per_table": 256})
    >>> small.encode_text(["A sentence."]).shape
    (1, 384)
    """
    embedder_cls = compressed_embedder_class(embedder)
    verbose = check_bool("verbose", verbose)
    if max_sequence_length is not None:
        max_sequence_length = check_positive_int("max_sequence_length", max_sequence_length)
    length = getattr(embedder.preprocessor, "sequence_length", None)
    if max_sequence_length is not None and isinstance(length, int) and length > max_sequence_length:
        raise ValueError(
            f"The embedder's preprocessor packs {length} tokens, more than "
            f"`max_sequence_length={max_sequence_length}`: set "
            f"`embedder.preprocessor.sequence_length` to at most {max_sequence_length} first."
        )
    backbone = compress_backbone(
        embedder.backbone, embedding, embedding_kwargs, verbose=verbose,
        max_sequence_length=max_sequence_length)
    return embedder_cls(
        backbone,
        preprocessor=embedder.preprocessor,
        pooling_mode=embedder.pooling_mode,
        normalize=embedder.normalize,
        name=embedder.name,
    )
