"""Group linear transform: the input split into groups, each with its own weight."""

import keras
from keras import ops

from keras_subembed.checks import check_bool
from keras_subembed.checks import check_positive_int


@keras.saving.register_keras_serializable(package="keras_subembed")
class GroupLinear(keras.layers.Layer):
    """A linear layer whose input and output are split into `groups` chunks.

    Chunk i of the input (width `input_dim / groups`) is mapped to chunk i of
    the output (width `units / groups`) by its own weight, so the layer equals
    a block-diagonal `Dense` with `groups` blocks at `1 / groups` of the
    parameters. One einsum over a `(groups, in / groups, units / groups)`
    kernel computes all groups. With `groups=1` it is a `Dense` layer.

    The kernel is initialised like the equivalent dense layer (Keras counts
    fan-in and fan-out over all groups).

    Args:
        units: int. Output width; divisible by `groups`.
        groups: int. Number of groups; must divide the input width too.
        use_bias: bool. Add a bias of size `units`.
        kernel_initializer, bias_initializer, kernel_regularizer: as `Dense`.

    Example:
    >>> layer = keras_subembed.layers.GroupLinear(96, groups=4)
    >>> tuple(layer(np.ones((2, 5, 64))).shape)
    (2, 5, 96)
    >>> tuple(layer.kernel.shape)
    (4, 16, 24)
    """

    def __init__(
        self,
        units,
        groups=1,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.groups = check_positive_int("groups", groups)
        if self.units % self.groups:
            raise ValueError(
                f"`units` must be divisible by `groups`. Received: units={units}, "
                f"groups={groups}"
            )
        self.use_bias = check_bool("use_bias", use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build(self, input_shape):
        input_width = input_shape[-1]
        if input_width is None or input_width % self.groups:
            raise ValueError(
                f"The input width must be divisible by `groups` in layer '{self.name}'. "
                f"Received: input width={input_width}, groups={self.groups}"
            )
        self.kernel = self.add_weight(
            name="kernel",
            shape=(self.groups, input_width // self.groups, self.units // self.groups),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias", shape=(self.units,), initializer=self.bias_initializer
            )
        self.built = True

    def call(self, inputs):
        leading_shape = ops.shape(inputs)[:-1]
        grouped = ops.reshape(inputs, (-1, self.groups, ops.shape(self.kernel)[1]))
        outputs = ops.einsum("bgi,gio->bgo", grouped, ops.cast(self.kernel, inputs.dtype))
        outputs = ops.reshape(outputs, (*leading_shape, self.units))
        if self.use_bias:
            outputs = outputs + ops.cast(self.bias, outputs.dtype)
        return outputs

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "groups": self.groups,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config
