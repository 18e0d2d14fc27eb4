"""`StagedModel`: what `ExportFormat.stage` makes, handed on to every later step of `export`."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class StagedModel:
    """What `ExportFormat.stage` made of a model; the pipeline hands it to
    `convert`, `measure`, `report` and `write` in turn.

    Args:
        model: the model as the file computes it (`embedding_mode` applied).
        serving_inputs: the file's signature (a `ServingInputs`).
        samples: the inputs to verify and time on (a list of
            `{input name: array}`, or a format's own kind, e.g. MediaPipe's
            texts); None when neither verification nor timing is asked.
        converted: the model the file is converted from, when it is not
            `model` (a copy with its kernels rounded as a recipe stores them).
        tokenizer_file: the `TokenizerFile` written beside the file, or None.

    A format that stages more subclasses it (MediaPipe's sequence length).

    Example:
    >>> staged = StagedModel(model="model", serving_inputs=None)
    >>> staged.samples is None and staged.tokenizer_file is None
    True
    """

    model: object
    serving_inputs: object
    samples: list = None
    converted: object = None
    tokenizer_file: object = None
