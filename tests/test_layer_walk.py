"""`walk_layers`: a model and every layer nested in it, parents first, each once."""

import keras

from keras_subembed.layer_walk import walk_layers


class Holder(keras.layers.Layer):
    """A layer holding others as an attribute and in a list, the same one twice."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = keras.layers.Dense(2, name="inner")
        self.stack = [keras.layers.Dense(2, name="first"), self.inner]

    def call(self, inputs):
        return self.inner(self.stack[0](inputs))


def test_nested_layers_are_reached_once_parents_first():
    inputs = keras.Input((3,))
    holder = Holder(name="holder")
    inner_model = keras.Model(inputs, holder(inputs), name="inner_model")
    outer_inputs = keras.Input((3,))
    model = keras.Model(outer_inputs, keras.layers.Dense(1, name="head")(inner_model(outer_inputs)),
                        name="outer")
    names = [layer.name for layer in walk_layers(model)]
    assert names[0] == "outer"
    assert sorted(names) == sorted(set(names))  # `inner` is held twice, listed once
    assert {"inner_model", "holder", "inner", "first", "head"} <= set(names)
    assert names.index("inner_model") < names.index("holder") < names.index("inner")
    assert [layer.name for layer in walk_layers(holder)][0] == "holder"
