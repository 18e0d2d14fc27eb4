"""Raw sentences -> `token_ids` and `padding_mask` for a `SentenceEncoder`."""

import json
import pathlib

import keras
import keras_hub

from keras_subembed.checks import check_positive_int

# Used only when neither the call nor the model's files give a length.
DEFAULT_SEQUENCE_LENGTH = 128


@keras.saving.register_keras_serializable(package="keras_subembed")
class SentenceEncoderPreprocessor(keras_hub.models.TextClassifierPreprocessor):
    """Tokenizes and packs sentences as `[CLS] tokens [SEP] [PAD]...`.

    keras-hub's `TextClassifierPreprocessor` (so it runs inside `tf.data` on
    every backend) with the label handling kept and `segment_ids` dropped:
    a sentence encoder's signature is `token_ids, padding_mask -> embedding`.
    Works with any keras-hub tokenizer that has start, end and pad tokens
    (`BertTokenizer`, `RobertaTokenizer`, ...). `from_preset` follows the
    model's own files: its normaliser (`tokenizer.json`: lowercase, strip
    accents, as uncased BERT was trained) and its length limit
    (`sentence_bert_config.json`'s `max_seq_length`).

    Example:
    >>> preprocessor = SentenceEncoderPreprocessor.from_preset(minilm_preset_dir())
    >>> preprocessor(["A naïve sentence."])["token_ids"].shape
    (1, 256)
    """

    def call(self, x, y=None, sample_weight=None):
        features = super().call(x)
        features = {name: features[name] for name in ("token_ids", "padding_mask")}
        return keras.utils.pack_x_y_sample_weight(features, y, sample_weight)

    @classmethod
    def from_preset(cls, preset, sequence_length=None, **kwargs):
        """The preprocessor of a keras-hub preset or a local Hugging Face folder.

        Args:
            preset: a preset name or folder.
            sequence_length: tokens per sentence with `[CLS]` and `[SEP]`;
                default the model's own `max_seq_length`
                (`sentence_bert_config.json`), else 128. At most that limit.
        """
        preset = str(preset)  # keras-hub takes names and folders as strings only
        tokenizer = keras_hub.tokenizers.Tokenizer.from_preset(preset)
        for name, value in model_normalization(preset).items():
            if hasattr(tokenizer, name):
                setattr(tokenizer, name, value)
        limit = model_sequence_limit(preset)
        if sequence_length is None:
            sequence_length = limit or DEFAULT_SEQUENCE_LENGTH
        check_sequence_length(sequence_length, limit)
        return cls(tokenizer, sequence_length=sequence_length, **kwargs)


def check_sequence_length(sequence_length, limit):
    """`sequence_length` as an int, refused when not positive or above `limit`."""
    sequence_length = check_positive_int("sequence_length", sequence_length)
    if limit is not None and sequence_length > limit:
        raise ValueError(
            f"`sequence_length` must be at most the model's limit of {limit} tokens. "
            f"Received: sequence_length={sequence_length}"
        )
    return sequence_length


def read_json(path):
    """A JSON file's object, or a `ValueError` naming the file."""
    try:
        values = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{str(path)!r} is not valid JSON: {error}") from None
    if not isinstance(values, dict):
        raise ValueError(f"{str(path)!r} must hold a JSON object. Received: {values!r}")
    return values


def model_normalization(preset):
    """`{"lowercase", "strip_accents"}` as the model's own tokenizer files say, or `{}`.

    Hugging Face's `BertNormalizer` strips accents whenever it lowercases
    unless told otherwise (`strip_accents: null`), as uncased BERT was
    trained; keras-hub's `BertTokenizer` keeps them, which turns every
    accented word into `[UNK]`.
    """
    folder = pathlib.Path(preset)
    if (folder / "tokenizer.json").is_file():
        normalizer = read_json(folder / "tokenizer.json").get("normalizer") or {}
        for step in normalizer.get("normalizers", [normalizer]):
            if step.get("type") == "BertNormalizer":
                return _normalization(step.get("lowercase", True), step.get("strip_accents"))
    if (folder / "tokenizer_config.json").is_file():
        config = read_json(folder / "tokenizer_config.json")
        if "do_lower_case" in config:
            return _normalization(config["do_lower_case"], config.get("strip_accents"))
    return {}


def _normalization(lowercase, strip_accents):
    lowercase = bool(lowercase)
    return {"lowercase": lowercase,
            "strip_accents": lowercase if strip_accents is None else bool(strip_accents)}


def model_sequence_limit(preset):
    """sentence-transformers' `max_seq_length` (`sentence_bert_config.json`): the
    longest input the model was trained on, often below its position table's
    size. None when the folder has no such file."""
    path = pathlib.Path(preset) / "sentence_bert_config.json"
    limit = read_json(path).get("max_seq_length") if path.is_file() else None
    return None if limit is None else check_positive_int("max_seq_length", limit)
