"""Walking every layer nested inside a model or a layer."""


def walk_layers(layer):
    """`layer` and every layer nested inside it, each once, parents first.

    Reaches layers held as attributes, in lists, or in functional graphs
    (a backbone inside a task inside a functional model).

    Example:
    >>> inputs = keras.Input((None,), dtype="int32")
    >>> model = keras.Model(inputs, keras.layers.Embedding(10, 4)(inputs))
    >>> [type(layer).__name__ for layer in walk_layers(model)]
    ['Functional', 'InputLayer', 'Embedding']
    """
    # Keras tracks nested layers everywhere but exposes the recursive walk only
    # as the private `_flatten_layers`; this is the one place that calls it.
    return list(layer._flatten_layers(include_self=True, recursive=True))
