"""Verification asserts finiteness: a NaN or an infinity fails, on either side (issue 32 item 2)."""

import keras
import numpy as np
import pytest

from keras_subembed.export import ExportVerificationError
from keras_subembed.export import export_tflite
from keras_subembed.export.output_parity import OutputParity


def parity_of(got, want, rounded=None):
    parity = OutputParity("The .tflite file")
    rounded = {} if rounded is None else {"rounded": {"embedding": np.asarray(rounded)}}
    parity.add({"embedding": np.asarray(got)}, {"embedding": np.asarray(want)}, **rounded)
    return parity.check("x.tflite", tolerance=1e-4)


def test_a_nan_or_infinity_in_any_output_fails_verification():
    # max(0.0, nan) is 0.0: a NaN used to pass with max_abs_error=0.
    with pytest.raises(ExportVerificationError, match=r"The .tflite file's output 'embedding' "
                       r"holds 1 NaN or infinite value\(s\) of 4"):
        parity_of([[np.nan, 1.0], [0.5, 0.5]], [[0.0, 1.0], [0.5, 0.5]])
    with pytest.raises(ExportVerificationError, match="Keras' output 'embedding' holds 2 NaN"):
        parity_of([[0.0, 1.0]], [[np.inf, -np.inf]])
    with pytest.raises(ExportVerificationError, match="with rounded weights holds 1 NaN"):
        parity_of([[0.0, 1.0]], [[0.0, 1.0]], rounded=[[0.0, np.nan]])
    assert parity_of([[0.0, 1.00005]], [[0.0, 1.0]])[0] == pytest.approx(5e-5)  # the largest error


@pytest.mark.tensorflow_only(reason="it exports a .tflite file")
def test_a_model_with_a_nan_weight_does_not_export_as_verified(tmp_path):
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    table = keras.layers.Embedding(20, 4)
    model = keras.Model(token_ids, keras.layers.GlobalAveragePooling1D()(table(token_ids)))
    weights = table.embeddings.numpy()
    weights[:, 0] = np.nan
    table.embeddings.assign(weights)
    with pytest.raises(ExportVerificationError, match="NaN or infinite value"):
        export_tflite(model, tmp_path / "nan.tflite", sequence_lengths=[8])
    assert not list(tmp_path.iterdir())
