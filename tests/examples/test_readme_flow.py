"""The README's keras-hub flow runs as written (smaller data), and its preset
loads back through keras-hub in a fresh process."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
# The main job's needs: the MiniLM package, TensorFlow for the .tflite file.
from test_compress_minilm import ROOT, needs_minilm  # noqa: E402
from test_compress_minilm import pytestmark as job_marks  # noqa: E402

pytestmark = [*job_marks, needs_minilm]


def readme_flow():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Compress, distil and ship a pretrained encoder", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "keras_subembed.compress(" in code and "save_to_preset" in code
    # Eight sentences instead of 512: the same calls, seconds instead of minutes.
    return code.replace("[:512]", "[:8]").replace("batch_size=32", "batch_size=4")


def run(script, cwd):
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                            text=True, timeout=1200, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_the_readme_flow_runs_and_its_preset_loads_in_a_fresh_process(tmp_path):
    run(readme_flow() + textwrap.dedent("""
        import numpy as np
        np.save("vectors.npy", np.asarray(vectors))
        assert type(small).__name__ == type(loaded).__name__ == "CompressedBertTextEmbedder"
        assert isinstance(small, keras_hub.models.BertTextEmbedder)
        np.testing.assert_array_equal(
            np.asarray(loaded.encode_text(["A sentence.", "Another one."])), np.asarray(vectors))
        """), tmp_path)
    assert (tmp_path / "minilm_small.tflite").is_file()
    vectors = np.load(tmp_path / "vectors.npy")
    assert vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1.0, rtol=1e-5)
    run(textwrap.dedent("""
        import keras_hub, numpy as np
        import keras_subembed
        for door in (keras_hub.models.TextEmbedder, keras_hub.models.BertTextEmbedder):
            model = door.from_preset("minilm_small")
            assert model.backbone.token_embedding.num_tables == 32
            np.testing.assert_array_equal(
                np.asarray(model.encode_text(["A sentence.", "Another one."])),
                np.load("vectors.npy"))
        """), tmp_path)
