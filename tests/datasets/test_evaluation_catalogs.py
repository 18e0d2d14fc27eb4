"""The finer evaluation's messages: several packages' catalogs per locale, the training
catalog's messages left out."""

import importlib
import re

import pytest

from keras_subembed import datasets
from keras_subembed.datasets import evaluation_catalogs
from tests.multilingual_utils import write_mo

HEADER = {"": "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"}


def fake_package(root, catalogs):
    """A package folder at `root` whose `__init__` fails: its catalogs are only read."""
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("raise RuntimeError('the catalogs are read, never imported')")
    for folder, messages in catalogs.items():
        write_mo(root / folder / "LC_MESSAGES" / "messages.mo", {**HEADER, **messages})


@pytest.fixture
def packages(tmp_path, monkeypatch):
    fake_package(tmp_path / "shopa", {
        "locale/de_DE": {"Add to the basket": "In den Warenkorb", "label_title": "Titel",
                         "Save the page": "Seite sichern"},
        "locale/zh_CN": {"Add to the basket": "加入购物车", "Remove the line": "删除此行"},
        "locale/es_MX": {"Add to the basket": "Agregar a la canasta", "Remove the line": "Quitar"}})
    fake_package(tmp_path / "docsb", {
        "locales/de": {"Add to the basket!": "Zum Korb", "Build the docs": "Doku bauen",
                       "Remove the line": "Zeile entfernen", "Close the window": "In den Warenkorb"}})
    fake_package(tmp_path / "trainer", {
        "locale/de": {"Save the page": "Die Seite speichern", "Open a file": "Doku bauen"}})
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return ["shopa", "docsb"]


def test_every_package_gives_each_locale_its_messages_the_training_ones_left_out(packages):
    pairs = datasets.evaluation_pairs(["de", "zh_Hans"], min_messages=2, packages=packages,
                                      training_catalog="trainer")
    # de_DE and de are one locale; a message id (label_title), a repeat of an English text
    # (punctuation aside), the training catalog's English (Save the page) and its German
    # (Doku bauen), and a translation already given (In den Warenkorb) are dropped.
    assert pairs == {"de": [("Add to the basket", "In den Warenkorb"),
                            ("Remove the line", "Zeile entfernen")],
                     "zh_Hans": [("Add to the basket", "加入购物车"), ("Remove the line", "删除此行")]}
    # Without a training catalog the Sphinx-like package's own message stays.
    assert ("Build the docs", "Doku bauen") in datasets.evaluation_pairs(
        ["de"], 2, packages, training_catalog=None)["de"]


def test_the_default_locales_are_those_with_enough_messages_one_per_language(packages, capsys):
    # es_MX is a regional variant (only pt_BR, zh_Hans and zh_Hant stand beside their language).
    assert sorted(datasets.evaluation_pairs(None, 2, packages, None, verbose=True)) == [
        "de", "zh_Hans"]
    assert capsys.readouterr().out == "Evaluation pairs: 2 locales, 2 to 4 messages each (6 in all)\n"
    assert sorted(datasets.evaluation_pairs(None, 3, packages, None)) == ["de"]
    assert datasets.evaluation_pairs(["es_MX"], 2, packages, None)["es_MX"][1] == (
        "Remove the line", "Quitar")


def test_folder_names_map_to_djangos_locales():
    assert [datasets.evaluation_locale(name) for name in (
        "de_DE", "zh_CN", "zh_TW.Big5", "he_IL", "no", "pt_PT", "pt_BR", "es_MX", "sr@latin")] == [
        "de", "zh_Hans", "zh_Hant", "he", "nb", "pt", "pt_BR", "es_MX", "sr@latin"]


def test_bad_arguments_and_missing_packages_are_named(packages, monkeypatch):
    with pytest.raises(ValueError, match=re.escape(
            "`locales` must name locales with at least min_messages=3 messages in "
            "['shopa', 'docsb']; 'zh_Hans' has 2. Received: locales=['de', 'zh_Hans']")):
        datasets.evaluation_pairs(["de", "zh_Hans"], 3, packages, None)
    with pytest.raises(TypeError, match=re.escape(
            "`packages` must be a non-empty list of names. Received: packages='shopa'")):
        datasets.evaluation_pairs(None, 2, "shopa")
    with pytest.raises(TypeError, match=re.escape(
            "`locales` must be a non-empty list of names. Received: locales='de'")):
        datasets.evaluation_pairs("de", 2, packages)
    with pytest.raises(ValueError, match=re.escape(
            "`min_messages` must be an integer >= 0. Received: min_messages=-1 (of type int).")):
        datasets.evaluation_pairs(None, -1, packages)
    with pytest.raises(TypeError, match=re.escape(
            "`training_catalog` must be a package's name or None. Received: training_catalog=3")):
        datasets.evaluation_pairs(None, 2, packages, training_catalog=3)
    # A missing package names what pip installs it as.
    monkeypatch.setitem(evaluation_catalogs.EVALUATION_PACKAGES, "nosuchcatalogs", "no-such-dist")
    with pytest.raises(ImportError, match=re.escape(
            "Reading `nosuchcatalogs`'s translation catalogs needs `no-such-dist`: it is not "
            "installed. Install it (only its files are read) with "
            "`python -m pip install --no-deps no-such-dist`.")):
        datasets.evaluation_pairs(None, 2, ["nosuchcatalogs"], None)
