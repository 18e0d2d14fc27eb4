"""A tiny multilingual SentencePiece model and a BERT embedder with its XLM-R tokenizer.

multilingual-e5 is a keras-hub `BertBackbone` with an `XLMRobertaTokenizer`
(keras-hub's converter pairs them the same way); these stand-ins are trained
in-process on a few sentences per script, so no test needs the 72 MB file.
"""

import functools
import io

# Ten scripts, capitals included where the script has them.
SCRIPT_TEXTS = {
    "Latin": ["The quick brown Fox jumps over the lazy dog.", "Die Straße in BERLIN ist gesperrt.",
              "Le café de Paris est très bon, ÉTÉ comme hiver."],
    "Cyrillic": ["Москва — столица России.", "Сегодня хорошая погода на улице."],
    "Greek": ["Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "ΚΑΛΗΜΕΡΑ κόσμε"],
    "Arabic": ["القاهرة هي عاصمة مصر.", "مرحبا بالعالم"],
    "Hebrew": ["ירושלים היא עיר עתיקה.", "שלום עולם"],
    "Devanagari": ["दिल्ली भारत की राजधानी है।", "नमस्ते दुनिया"],
    "Bengali": ["ঢাকা বাংলাদেশের রাজধানী।", "বাংলা ভাষা"],
    "Thai": ["กรุงเทพเป็นเมืองหลวงของประเทศไทย", "สวัสดีชาวโลก"],
    "CJK": ["東京は日本の首都です。", "北京是中国的首都。"],
    "Hangul": ["서울은 한국의 수도입니다.", "안녕하세요 세계"],
}
TEXTS = [text for texts in SCRIPT_TEXTS.values() for text in texts]
# What tokenizers get wrong: unknown characters, zero-width and control
# characters, NFKC forms, emoji, case, blanks.
HARD_TEXTS = [
    "snowman ☃ and Ǆ", "zero\u200bwidth soft\u00adhyphen no\u00a0break", "ＦＵＬＬ ｗｉｄｔｈ ﬁ",
    "emoji 😀👍🏽 flags 🇫🇷", "control\x01chars\ttabs\r\nlines", "MIXED Case ÉTÉ İstanbul",
    "   spaces   around  ", "", "[CLS] <s> </s> <pad> <unk> [SEP]",
]


@functools.lru_cache(maxsize=None)
def sentencepiece_proto(vocab_size=300):
    """An XLM-R style Unigram model (`<unk>`=0 `<s>`=1 `</s>`=2, NFKC) as bytes."""
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXTS * 20), model_writer=model, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, minloglevel=2)
    return model.getvalue()


def xlm_roberta_tokenizer():
    import keras_hub

    return keras_hub.models.XLMRobertaTokenizer(proto=sentencepiece_proto())


def bert_xlm_roberta_embedder(sequence_length=24, seed=5):
    """A tiny multilingual-e5: `BertBackbone` + `XLMRobertaTokenizer`, mean pooled."""
    import keras
    import keras_hub

    keras.utils.set_random_seed(seed)
    tokenizer = xlm_roberta_tokenizer()
    backbone = keras_hub.models.BertBackbone(
        tokenizer.vocabulary_size(), num_layers=1, num_heads=2, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32)
    preprocessor = keras_hub.models.BertTextEmbedderPreprocessor(
        tokenizer, sequence_length=sequence_length)
    return keras_hub.models.BertTextEmbedder(backbone, preprocessor, pooling_mode="mean")


def keras_ids(tokenizer, text):
    """The ids keras-hub's `tokenizer` gives `text`, as a list."""
    import keras

    return keras.ops.convert_to_numpy(tokenizer(text)).tolist()
