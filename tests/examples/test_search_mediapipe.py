"""examples/search_mediapipe.py finds a corpus line with MediaPipe alone."""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[2]
sys.path[:0] = [str(ROOT / "examples"), str(ROOT / "tests" / "export" / "mediapipe")]
pytestmark = pytest.mark.tensorflow_only(reason="it exports a .tflite file")
pytest.importorskip("mediapipe", reason="no `mediapipe` wheel for this platform")


def test_a_query_equal_to_a_line_finds_that_line_first(tmp_path, capsys):
    import search_mediapipe
    from test_mediapipe_format import uncased_embedder

    from keras_subembed.export import export_mediapipe

    model = tmp_path / "model.tflite"
    export_mediapipe(uncased_embedder(), model)
    corpus = tmp_path / "lines.txt"
    corpus.write_text("the police said the road was closed\nrain in the city\n\none new game\n",
                      encoding="utf-8")
    search_mediapipe.main([str(model), "Rain in the CITY", "--corpus", str(corpus), "--top", "2"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "Rain in the CITY"
    assert lines[1].endswith("rain in the city") and lines[1].strip().startswith("1.000")
    assert len(lines) == 3
