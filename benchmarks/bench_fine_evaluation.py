"""The finer evaluation against Django's 177 messages: the teacher's English -> locale
recall@1 per locale, with its 95% interval, on each.

`TextSets.multilingual(evaluation="fine")` (`datasets.evaluation_pairs`: 600 messages drawn
from each of 45 locales' catalogs, Wagtail's training messages left out) beside Django's
set (`django/<locale>`). Needs the `multilingual` extra and the five catalog packages:

    python -m pip install --no-deps Trac django-oscar sphinx plone.app.locales django-allauth
    python benchmarks/bench_fine_evaluation.py > fine.md
"""

import argparse
import time

from keras_subembed import datasets
from keras_subembed.evaluation import keras_runner
from multilingual_setup import language_evaluation
from multilingual_setup import load_teacher
from multilingual_setup import recipe_flags
from multilingual_setup import text_sets


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flags", default="--evaluation fine",
                        help="the recipe's text flags (default: the fine evaluation)")
    args = parser.parse_args()
    started = time.perf_counter()
    counts = {locale: len(pairs) for locale, pairs in datasets.evaluation_pairs().items()}
    texts = text_sets(recipe_flags(args.flags))
    print(f"{texts.summary()}\n")
    teacher = load_teacher()
    row = language_evaluation(texts, teacher).measure(keras_runner(teacher))
    scores = row["english_to_locale"]
    django = scores["sets"]["django"]
    print("| set | locales | messages each | en->loc [95%] | interval width (points) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, found, mean, interval in (
            ("fine", [l for l in scores["accuracy"] if "/" not in l], scores["mean_accuracy"],
             scores["mean_interval"]),
            ("django", [l for l in scores["accuracy"] if l.startswith("django/")],
             django["mean_accuracy"], django["mean_interval"])):
        messages = sorted({len(texts.translations[locale]) for locale in found})
        widths = [100 * (scores["interval"][l][1] - scores["interval"][l][0]) for l in found]
        print(f"| {name} | {len(found)} | {messages[0]} | {100 * mean:.1f} "
              f"[{100 * interval[0]:.1f}, {100 * interval[1]:.1f}] | "
              f"per locale median {sorted(widths)[len(widths) // 2]:.1f} |")
    print("\n| locale | messages available | fine en->loc [95%] | django en->loc [95%] |")
    print("| --- | ---: | ---: | ---: |")
    for locale in sorted(l for l in scores["accuracy"] if "/" not in l):
        cells = []
        for key in (locale, f"django/{locale}"):
            if key in scores["accuracy"]:
                low, high = scores["interval"][key]
                cells.append(f"{100 * scores['accuracy'][key]:.1f} [{100 * low:.1f}, "
                             f"{100 * high:.1f}]")
            else:
                cells.append("-")
        print(f"| {locale} | {counts[locale]:,} | {cells[0]} | {cells[1]} |")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
