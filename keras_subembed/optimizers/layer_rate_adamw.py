"""AdamW with a larger (or smaller) learning rate for the weights of named layers."""

import keras

from keras_subembed.checks import check_positive_number


@keras.saving.register_keras_serializable(package="keras_subembed")
class LayerRateAdamW(keras.optimizers.AdamW):
    """AdamW whose learning rate is scaled for the variables of named layers.

    A freshly compressed token embedding must move far from its
    initialisation, while the pretrained transformer around it should move
    little: one optimizer, two rates. A variable whose path contains the
    layer name `name` as a segment (`"token_embedding/sub_table_0"`) is
    updated with `learning_rate * layer_rate_multipliers[name]`; the rest
    with `learning_rate`. A key may also be a layer path
    (`"embeddings/token_embedding"`), whose segments must appear in that
    order: it names one nested layer without its siblings (RoBERTa's
    `"embeddings"` also holds the position embedding). Works under XLA, `tf.distribute` and on JAX (the
    rate is applied in `update_step`, which every backend calls).

    Args:
        learning_rate: the base rate (a float or a schedule).
        layer_rate_multipliers: `{layer name or path: multiplier}`, each
            multiplier a finite number > 0.
        **kwargs: the arguments of `keras.optimizers.AdamW`.

    Example:
    >>> optimizer = LayerRateAdamW(2e-5, {"token_embedding": 50.0})
    """

    def __init__(self, learning_rate=0.001, layer_rate_multipliers=None, **kwargs):
        if not callable(learning_rate):
            check_positive_number("learning_rate", learning_rate)
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not isinstance(layer_rate_multipliers, (dict, type(None))):
            raise TypeError(
                "`layer_rate_multipliers` must be a dict {layer name: multiplier}. "
                f"Received: layer_rate_multipliers={layer_rate_multipliers!r}"
            )
        multipliers = dict(layer_rate_multipliers or {})
        for name, multiplier in multipliers.items():
            if not isinstance(name, str) or not all(name.split("/")):
                raise ValueError(
                    "`layer_rate_multipliers` keys must be layer names or paths. "
                    f"Received: {name!r}"
                )
            check_positive_number(f"layer_rate_multipliers[{name!r}]", multiplier)
        self.layer_rate_multipliers = {k: float(v) for k, v in multipliers.items()}

    def multiplier_for(self, variable):
        """The rate multiplier of `variable` (1.0 outside the named layers)."""
        segments = variable.path.split("/")[:-1]
        for name, multiplier in self.layer_rate_multipliers.items():
            wanted = name.split("/")
            if any(segments[start: start + len(wanted)] == wanted
                   for start in range(len(segments))):
                return multiplier
        return 1.0

    def build(self, variables):
        super().build(variables)
        # By index, as Adam keeps its moments: on TensorFlow `update_step`
        # receives the backend variable, which has no Keras path.
        self._rate_multipliers = [self.multiplier_for(variable) for variable in variables]

    def update_step(self, gradient, variable, learning_rate):
        multiplier = self._rate_multipliers[self._get_variable_index(variable)]
        if multiplier != 1.0:
            learning_rate = learning_rate * multiplier
        super().update_step(gradient, variable, learning_rate)

    def get_config(self):
        config = super().get_config()
        config["layer_rate_multipliers"] = dict(self.layer_rate_multipliers)
        return config
