"""What a model's own files say about its inputs: normaliser, length limit, pooling.

keras-hub's `from_preset` reads a Hugging Face folder's weights and
vocabulary; sentence-transformers folders say more (`tokenizer.json`'s
normaliser, `sentence_bert_config.json`'s `max_seq_length`,
`1_Pooling/config.json`), which `match_model_files` applies to an embedder.
"""

import json
import pathlib
import re

import keras_hub

from keras_subembed.checks import check_positive_int
from keras_subembed.optional import safetensors
from keras_subembed.tokenizer_kinds.sentencepiece import parse_xlm_roberta_sentencepiece
from keras_subembed.tokenizer_kinds.wordpiece import read_vocabulary
from keras_subembed.tokenizer_kinds.wordpiece import vocabulary_fingerprint


# `preprocessor` attribute: the length the model reads (see `model_sequence_length`).
_MODEL_LENGTH = "_keras_subembed_model_sequence_length"


def record_model_sequence_length(preprocessor, sequence_length):
    """Remember `sequence_length` as the length `preprocessor`'s model reads, the one
    a saved preset keeps whatever shorter length is set for an evaluation."""
    if preprocessor is not None and isinstance(sequence_length, int):
        setattr(preprocessor, _MODEL_LENGTH, sequence_length)


def keep_model_sequence_length(preprocessor):
    """Record `preprocessor`'s current length as its model's, unless one is recorded."""
    if not hasattr(preprocessor, _MODEL_LENGTH):
        record_model_sequence_length(preprocessor, getattr(preprocessor, "sequence_length", None))


def model_sequence_length(preprocessor):
    """The recorded length of `preprocessor`'s model, else its current `sequence_length`."""
    return getattr(preprocessor, _MODEL_LENGTH, getattr(preprocessor, "sequence_length", None))


def check_tokenizer_fits(preprocessor, backbone):
    """`ValueError` when the tokenizer gives ids the token embedding has no row
    for (a preset whose vocabulary and model do not belong together).

    A preset's vocabulary is loaded after the model is built, so this runs
    again when text is encoded.
    """
    tokenizer = getattr(preprocessor, "tokenizer", None)
    # A WordPiece/BPE vocabulary or a SentencePiece model, once loaded.
    if tokenizer is None or not (getattr(tokenizer, "vocabulary", None)
                                 or getattr(tokenizer, "proto", None)):
        return
    size, input_dim = tokenizer.vocabulary_size(), backbone.token_embedding.input_dim
    if size > input_dim:
        raise ValueError(
            f"The tokenizer's vocabulary has {size} tokens, but the token embedding takes "
            f"ids below {input_dim} (its `input_dim`): text would give ids {input_dim}.."
            f"{size - 1}, which have no row. The vocabulary and the model do not belong "
            "together (check the preset's tokenizer files and config.json)."
        )


def load_text_embedder(preset, **kwargs):
    """A Hugging Face / sentence-transformers folder as a keras-hub `TextEmbedder`
    that follows its own files (`match_model_files`).

    keras-hub's converters do the loading: a BERT folder whose tokenizer is
    XLM-R's SentencePiece model (multilingual-e5-small and -base,
    paraphrase-multilingual-MiniLM-L12-v2) becomes a `BertTextEmbedder`
    with an `XLMRobertaTokenizer`; pooling and normalisation come from
    `1_Pooling/config.json` and `modules.json`, the length from
    `sentence_bert_config.json`. The embedder embeds exactly the string it
    is given: add a model card's prefix yourself (e5's "query: " /
    "passage: ").

    Refused with a `ValueError` naming the folder: a folder without the
    tokenizer file its config asks for, and a tokenizer with more ids than
    the token table has rows. Refused with a `ValueError` naming the file
    and the field (`check_model_folder`): config sizes that are not positive
    integers, weights of more or fewer layers than `num_hidden_layers`, a
    token table of another `vocab_size`, a `max_seq_length` past the
    position table, a SentencePiece model that is unreadable or not XLM-R's
    (`<unk>`, `<s>`, `</s>` first). Keyword arguments other than
    `LOAD_KEYWORDS` are refused with a `TypeError`.

    Example:

    ```python
    embedder = load_text_embedder(multilingual_e5_preset_dir())
    vectors = embedder.predict(["query: how old is the moon"])
    ```
    """
    unknown = sorted(set(kwargs) - set(LOAD_KEYWORDS))
    if unknown:
        raise TypeError(
            f"`load_text_embedder` takes no argument {', '.join(map(repr, unknown))}; it takes "
            f"the folder and {', '.join(LOAD_KEYWORDS)}. Received: "
            + ", ".join(f"{name}={kwargs[name]!r:.60}" for name in unknown))
    folder = pathlib.Path(preset)
    if not folder.is_dir():
        raise ValueError(f"`preset` must be a model's folder. Received: "
                         f"preset={str(preset)!r}, not a folder")
    missing = [name for name in model_tokenizer_files(folder) if not (folder / name).is_file()]
    if missing:
        found = sorted(entry.name for entry in folder.iterdir())
        raise ValueError(
            f"The folder has no tokenizer: its config asks for {', '.join(missing)}, which "
            f"it lacks (it holds {', '.join(found) or 'nothing'}). Copy the model's tokenizer "
            f"files into it. Received: preset={str(preset)!r}")
    check_model_folder(folder)
    embedder = keras_hub.models.TextEmbedder.from_preset(str(folder), **kwargs)
    return match_model_files(embedder, folder)


# What `load_text_embedder` passes on to keras-hub's `TextEmbedder.from_preset`.
LOAD_KEYWORDS = ("load_weights", "dtype", "pooling_mode", "normalize")
# config.json's sizes keras-hub builds the model from.
_CONFIG_SIZES = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                 "max_position_embeddings")


def check_model_folder(folder):
    """`ValueError` naming the file and the field for what keras-hub would take
    on trust: sizes in `config.json` it cannot build, weights the config leaves
    unused or does not fit, a length past the position table, a SentencePiece
    model that is not XLM-R's."""
    folder = pathlib.Path(folder)
    config_path = folder / "config.json"
    if not config_path.is_file():
        return  # keras-hub names what it misses
    config = read_json(config_path)
    if config.get("model_type") not in ("bert", "distilbert", "roberta", "xlm-roberta"):
        return
    sizes = {}
    for name in _CONFIG_SIZES:
        if name in config:
            try:
                sizes[name] = check_positive_int(name, config[name])
            except ValueError:
                raise ValueError(f"{str(config_path)!r} sets `{name}` to {config[name]!r}; "
                                 "expected a positive integer.") from None
    heads, hidden = sizes.get("num_attention_heads"), sizes.get("hidden_size")
    if heads and hidden and hidden % heads:
        raise ValueError(f"{str(config_path)!r} sets `num_attention_heads` to {heads}, which "
                         f"does not divide `hidden_size`={hidden}.")
    positions = sizes.get("max_position_embeddings")
    limit_path = folder / "sentence_bert_config.json"
    limit = model_sequence_limit(folder)
    if positions and limit is not None and limit > positions:
        raise ValueError(f"{str(limit_path)!r} sets `max_seq_length` to {limit}, beyond the "
                         f"{positions} positions of config.json's `max_position_embeddings`.")
    if "sentencepiece.bpe.model" in model_tokenizer_files(folder):
        path = folder / "sentencepiece.bpe.model"
        parse_xlm_roberta_sentencepiece(path.read_bytes(), repr(str(path)))
    check_weights_fit_config(folder / "model.safetensors", sizes)


def check_weights_fit_config(path, sizes):
    """`ValueError` when `model.safetensors` holds layers the config does not use
    or a token table of another `vocab_size`: keras-hub would drop or misread them."""
    if not path.is_file():
        return
    if not safetensors.available:  # keras-hub cannot read the file either, and says so
        return
    try:
        with safetensors.safe_open(str(path), framework="numpy") as weights:
            shapes = {name: weights.get_slice(name).get_shape() for name in weights.keys()}
    except Exception as error:  # safetensors raises its own SafetensorError
        raise ValueError(f"{str(path)!r} is not a readable safetensors file: {error}") from None
    config_path = path.with_name("config.json")
    layers = {int(match.group(1)) for name in shapes
              for match in [re.search(r"(?:^|\.)(?:encoder\.)?layers?\.(\d+)\.", name)] if match}
    wanted = sizes.get("num_hidden_layers")
    if wanted is not None and layers and layers != set(range(wanted)):
        raise ValueError(
            f"{str(path)!r} holds weights of {len(layers)} layers (numbered "
            f"{min(layers)}..{max(layers)}); {str(config_path)!r} sets `num_hidden_layers` to "
            f"{wanted}. Weights the config does not use would be dropped silently.")
    table = [shape for name, shape in shapes.items()
             if name.endswith("embeddings.word_embeddings.weight")]
    if table and sizes.get("vocab_size") is not None and table[0][0] != sizes["vocab_size"]:
        raise ValueError(
            f"{str(config_path)!r} sets `vocab_size` to {sizes['vocab_size']}; the token "
            f"table in {str(path)!r} has {table[0][0]} rows.")


def model_tokenizer_files(preset):
    """The tokenizer files keras-hub's converter reads for the folder's `config.json`."""
    folder = pathlib.Path(preset)
    if not (folder / "config.json").is_file():
        return ["config.json"]
    model_type = read_json(folder / "config.json").get("model_type")
    if model_type == "xlm-roberta":
        return ["sentencepiece.bpe.model"]
    if model_type == "roberta":
        return ["vocab.json", "merges.txt"]
    if model_type not in ("bert", "distilbert"):
        return []  # keras-hub names what it misses
    config = folder / "tokenizer_config.json"
    if not config.is_file():
        return ["tokenizer_config.json"]
    if "XLMRoberta" in str(read_json(config).get("tokenizer_class") or ""):
        return ["sentencepiece.bpe.model"]
    return ["vocab.txt"]


def match_model_files(embedder, preset):
    """Make a keras-hub `TextEmbedder` loaded from `preset` follow its own files.

    Sets the tokenizer's `lowercase` / `strip_accents` as `tokenizer.json`
    says (Hugging Face's `BertNormalizer` strips accents whenever it
    lowercases unless told otherwise; keras-hub's `BertTokenizer` keeps them,
    which turns every accented word into `[UNK]`), and the preprocessor's
    `sequence_length` to the `max_seq_length` the model was trained with
    (`sentence_bert_config.json`) when that is shorter. Returns `embedder`.

    The folder must hold at least one of `MODEL_FILES`, and its vocabulary
    (`vocab.txt` or `tokenizer.json`'s), when it has one, must be the
    embedder's: another model's files are refused, not applied.

    Example:
    ```python
    embedder = keras_hub.models.TextEmbedder.from_preset(minilm_preset_dir())
    embedder = match_model_files(embedder, minilm_preset_dir())
    ```
    """
    if not pathlib.Path(preset).is_dir():
        raise ValueError(
            f"`preset` must be the model's folder (its tokenizer.json, "
            f"sentence_bert_config.json). Received: preset={str(preset)!r}, not a folder"
        )
    found = [name for name in MODEL_FILES if (pathlib.Path(preset) / name).is_file()]
    if not found:
        raise ValueError(
            f"`preset` holds none of the model's files ({', '.join(MODEL_FILES)}): "
            f"there is nothing to match. Received: preset={str(preset)!r}"
        )
    preset = str(preset)
    preprocessor = embedder.preprocessor
    if preprocessor is None:
        return embedder
    check_tokenizer_fits(preprocessor, embedder.backbone)
    check_same_vocabulary(preprocessor.tokenizer, preset)
    match_normalization(preprocessor.tokenizer, preset)
    limit = model_sequence_limit(preset)
    if limit is not None and limit < preprocessor.sequence_length:
        preprocessor.sequence_length = limit
    # What a saved preset keeps, whatever length is set for an evaluation.
    record_model_sequence_length(preprocessor, preprocessor.sequence_length)
    return embedder


# The files of a Hugging Face / sentence-transformers folder this module reads.
MODEL_FILES = ("tokenizer.json", "tokenizer_config.json", "sentence_bert_config.json", "vocab.txt")


def model_vocabulary(preset):
    """The folder's vocabulary (`vocab.txt`, else `tokenizer.json`'s), in id order, or None."""
    folder = pathlib.Path(preset)
    if (folder / "vocab.txt").is_file():
        return read_vocabulary(folder / "vocab.txt")
    if (folder / "tokenizer.json").is_file():
        vocabulary = (read_json(folder / "tokenizer.json").get("model") or {}).get("vocab")
        if isinstance(vocabulary, dict):
            return [token for token, _ in sorted(vocabulary.items(), key=lambda item: item[1])]
    return None


def check_same_vocabulary(tokenizer, preset):
    """`ValueError` when the folder's vocabulary is not `tokenizer`'s: another
    model's files would set this one's normalisation and length."""
    theirs, ours = model_vocabulary(preset), getattr(tokenizer, "vocabulary", None)
    if not theirs or not ours or list(theirs) == list(ours):
        return
    raise ValueError(
        f"The folder's vocabulary ({len(theirs)} tokens, sha256 "
        f"{vocabulary_fingerprint(theirs)[:12]}) is not the embedder's ({len(ours)} tokens, "
        f"sha256 {vocabulary_fingerprint(ours)[:12]}): these are another model's files. "
        f"Received: preset={str(preset)!r}"
    )


def match_normalization(tokenizer, preset):
    """Set `tokenizer`'s `lowercase` / `strip_accents` as the model's files say."""
    for name, value in model_normalization(preset).items():
        if hasattr(tokenizer, name):
            setattr(tokenizer, name, value)
    return tokenizer


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
        steps = normalizer.get("normalizers", [normalizer]) if isinstance(normalizer, dict) else None
        if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
            raise ValueError(
                f"{str(folder / 'tokenizer.json')!r} has a malformed `normalizer`: "
                f"{normalizer!r:.200}"
            )
        path = folder / "tokenizer.json"
        for step in steps:
            if step.get("type") == "BertNormalizer":
                return _normalization(step.get("lowercase", True), step.get("strip_accents"), path)
        # The same steps spelled out: Sequence[NFD, Lowercase, StripAccents].
        types = {step.get("type") for step in steps}
        if types & {"Lowercase", "StripAccents"}:
            return {"lowercase": "Lowercase" in types, "strip_accents": "StripAccents" in types}
    if (folder / "tokenizer_config.json").is_file():
        config = read_json(folder / "tokenizer_config.json")
        if "do_lower_case" in config:
            return _normalization(config["do_lower_case"], config.get("strip_accents"),
                                  folder / "tokenizer_config.json")
    return {}


def _normalization(lowercase, strip_accents, path):
    lowercase = _flag(lowercase, "lowercase", path)
    strip_accents = None if strip_accents is None else _flag(strip_accents, "strip_accents", path)
    return {"lowercase": lowercase,
            "strip_accents": lowercase if strip_accents is None else strip_accents}


def _flag(value, name, path):
    """A true/false setting of a model's file; the string "false" is false (not a
    non-empty string, which Python reads as true)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(
        f"{str(path)!r} sets `{name}` to {value!r}; expected true or false.")


def model_sequence_limit(preset):
    """sentence-transformers' `max_seq_length` (`sentence_bert_config.json`): the
    longest input the model was trained on, often below its position table's
    size. None when the folder has no such file."""
    path = pathlib.Path(preset) / "sentence_bert_config.json"
    limit = read_json(path).get("max_seq_length") if path.is_file() else None
    return None if limit is None else check_positive_int("max_seq_length", limit)
