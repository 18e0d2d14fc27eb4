"""`LayerRateAdamW`: which variables a key (a layer name or path) names; keys checked; the
rates kept through serialization. (Its update step: tests/models/training/test_embedding_distiller.py.)"""

import types

import keras
import pytest

from keras_subembed.optimizers import LayerRateAdamW


def rate(optimizer, path):
    return optimizer.multiplier_for(types.SimpleNamespace(path=path))


def test_a_key_names_whole_segments_and_a_path_its_segments_in_order():
    optimizer = LayerRateAdamW(1e-3, {"embeddings/token_embedding": 5.0, "head": 2.0})
    assert rate(optimizer, "backbone/embeddings/token_embedding/sub_table_0") == 5.0
    # The position table beside it, and the segments in another order, are not named.
    assert rate(optimizer, "backbone/embeddings/position_embedding/embeddings") == 1.0
    assert rate(optimizer, "token_embedding/embeddings/kernel") == 1.0
    # The last segment is the variable's own name, not a layer's.
    assert rate(optimizer, "embeddings/token_embedding") == 1.0
    assert rate(optimizer, "head/kernel") == 2.0
    assert rate(optimizer, "head_2/kernel") == 1.0 and rate(optimizer, "my_head/bias") == 1.0


@pytest.mark.parametrize("multipliers, error, message", [
    ([("head", 2.0)], TypeError, r"`layer_rate_multipliers` must be a dict \{layer name: "
                                 r"multiplier\}\. Received: layer_rate_multipliers=\[\('head', 2\.0\)\]"),
    ({"a//b": 2.0}, ValueError, r"keys must be layer names or paths\. Received: 'a//b'"),
    ({"": 2.0}, ValueError, r"keys must be layer names or paths\. Received: ''"),
    ({3: 2.0}, ValueError, r"keys must be layer names or paths\. Received: 3"),
    ({"head": float("inf")}, ValueError, r"`layer_rate_multipliers\['head'\]` must be a finite "
                                         r"number > 0\. Received: layer_rate_multipliers\['head'\]=inf"),
])
def test_bad_multipliers_are_named(multipliers, error, message):
    with pytest.raises(error, match=message):
        LayerRateAdamW(1e-3, multipliers)


def test_the_rates_survive_keras_serialization():
    optimizer = LayerRateAdamW(2e-5, {"token_embedding": 50}, weight_decay=0.01)
    copy = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(copy) is LayerRateAdamW
    assert copy.layer_rate_multipliers == {"token_embedding": 50.0}
    assert copy.weight_decay == pytest.approx(0.01)
