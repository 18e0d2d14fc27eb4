"""The recipe: shrink a sentence encoder for every runtime in one call, or step by step.

`shrink(model, output, budget_mb=...)` loads a model (a folder, a keras-hub
`TextEmbedder`, or a built-in offline one), picks the compression setting a size budget
buys (`choose_setting`), compresses the token table (`keras_subembed.compress`), distils
the student (`distil`: two stages, a pair loss over translations, quantization-aware,
runs averaged), exports it to LiteRT, MediaPipe and ONNX (`ship`) and writes a report per
language (`LanguageEvaluation`, `write_language_report`). On the command line:
`python -m keras_subembed shrink MODEL --budget-mb 31 --output DIR`.
"""

from keras_subembed.recipe.distillation import DISTILLATION_DEFAULTS
from keras_subembed.recipe.distillation import distil
from keras_subembed.recipe.settings import LADDER
from keras_subembed.recipe.settings import SETTINGS
from keras_subembed.recipe.settings import choose_setting
from keras_subembed.recipe.settings import table_bytes
from keras_subembed.recipe.settings import transformer_bytes
from keras_subembed.recipe.shipping import ship
from keras_subembed.recipe.shrink import shrink
from keras_subembed.recipe.shrink_result import ShrinkResult
from keras_subembed.recipe.text_sets import DEFAULT_LOCALES
from keras_subembed.recipe.text_sets import TextSets

__all__ = [
    "DEFAULT_LOCALES",
    "DISTILLATION_DEFAULTS",
    "LADDER",
    "SETTINGS",
    "ShrinkResult",
    "TextSets",
    "choose_setting",
    "distil",
    "ship",
    "shrink",
    "table_bytes",
    "transformer_bytes",
]
