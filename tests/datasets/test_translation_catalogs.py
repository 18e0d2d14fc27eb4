"""Parallel UI sentences from any installed package's gettext catalogs."""

import importlib
import pathlib
import re

import pytest

from keras_subembed import datasets
from tests.multilingual_utils import write_mo

HEADER = {"": "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"}


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "uipkg"
    (root / "__init__.py").parent.mkdir()
    (root / "__init__.py").write_text("raise RuntimeError('the catalogs are read, never imported')")
    write_mo(root / "locale" / "fr" / "LC_MESSAGES" / "django.mo", {
        **HEADER, "Save the page": "Enregistrer la page", "Delete %(name)s": "Supprimer %(name)s",
        "OK": "D'accord", "Same text": "Same text",
        "menu\x04Open the file": "Ouvrir le fichier",
        "One item\x00%(count)d items": "Un élément\x00%(count)d éléments"})
    write_mo(root / "admin" / "locale" / "fr" / "LC_MESSAGES" / "djangojs.mo", {
        **HEADER, "Save the page": "Sauver la page", "Close the window": "Fermer la fenêtre"})
    write_mo(root / "locale" / "de" / "LC_MESSAGES" / "django.mo", {**HEADER, "Save the page": "Seite speichern"})
    write_mo(root / "locale" / "en_GB" / "LC_MESSAGES" / "django.mo", {**HEADER, "Colour": "Colour"})
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return "uipkg"


def test_locales_and_pairs_of_every_catalog_in_path_order(package):
    assert datasets.catalog_locales(package) == ["de", "fr"]
    pairs = datasets.catalog_translation_pairs(package, "fr")
    # admin/ sorts before locale/: its "Save the page" comes first and the later one is dropped.
    assert pairs == [("Close the window", "Fermer la fenêtre"), ("Save the page", "Sauver la page"),
                     ("Open the file", "Ouvrir le fichier")]
    assert ("One item", "Un élément") in datasets.catalog_translation_pairs(package, "fr",
                                                                           min_letters=2)
    assert ("Delete %(name)s", "Supprimer %(name)s") in datasets.catalog_translation_pairs(
        package, "fr", min_letters=6)
    assert ("OK", "D'accord") in datasets.catalog_translation_pairs(package, "fr", min_letters=0)
    assert datasets.catalog_translation_pairs(package, "de") == [("Save the page", "Seite speichern")]


def test_bad_package_locale_and_min_letters_are_named(package):
    with pytest.raises(ValueError, match=re.escape(
            "`locale` must be one of the locales `uipkg` translates into ['de', 'fr']. "
            "Received: locale='en_GB'")):
        datasets.catalog_translation_pairs(package, "en_GB")
    with pytest.raises(ValueError, match=re.escape(
            "`min_letters` must be an integer >= 0. Received: min_letters=2.5 (of type float).")):
        datasets.catalog_translation_pairs(package, "fr", min_letters=2.5)
    with pytest.raises(TypeError, match=re.escape(
            "`package` must be the name of an installed top-level package. Received: package=None")):
        datasets.catalog_locales(None)
    with pytest.raises(TypeError, match=re.escape("Received: package='uipkg.locale'")):
        datasets.catalog_locales("uipkg.locale")
    with pytest.raises(TypeError, match=re.escape(
            "`paths` must be a list of `.mo` file paths. Received: paths='django.mo'")):
        datasets.read_catalog_pairs("django.mo")
    with pytest.raises(ImportError, match=re.escape(
            "Reading `no_such_ui_package`'s translation catalogs needs `no_such_ui_package`: it "
            "is not installed. Install it (only its files are read) with "
            "`python -m pip install --no-deps no_such_ui_package`.")):
        datasets.catalog_locales("no_such_ui_package")


@pytest.mark.skipif(importlib.util.find_spec("django") is None, reason="Django is not installed")
def test_django_pairs_are_its_django_catalogs_read_by_the_same_rules():
    pairs = datasets.django_translation_pairs("de")
    root = pathlib.Path(importlib.util.find_spec("django").origin).parent
    catalogs = sorted(root.glob("**/locale/de/LC_MESSAGES/django.mo"))
    # Django's reader goes core first, then contrib; read so, the generic reader agrees.
    core = [path for path in catalogs if "conf" in path.parts]
    assert datasets.read_catalog_pairs(core + [p for p in catalogs if p not in core]) == pairs
    everything = datasets.catalog_translation_pairs("django", "de")  # djangojs.mo too
    assert len(everything) > len(pairs) > 400


def test_an_empty_or_cut_mo_file_is_named(package, tmp_path):
    empty = tmp_path / "uipkg" / "locale" / "it" / "LC_MESSAGES" / "django.mo"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"'.*it/LC_MESSAGES/django\.mo' is not a readable "
                                         r"gettext \.mo catalog"):
        datasets.catalog_translation_pairs(package, "it")
    cut = tmp_path / "cut.mo"
    cut.write_bytes((tmp_path / "uipkg" / "locale" / "de" / "LC_MESSAGES" / "django.mo")
                    .read_bytes()[:30])
    with pytest.raises(ValueError, match=r"'.*cut\.mo' is not a readable gettext \.mo catalog"):
        datasets.read_catalog_pairs([cut])
    with pytest.raises(FileNotFoundError):
        datasets.read_catalog_pairs([tmp_path / "missing.mo"])


def test_a_module_or_a_path_is_no_package_to_install():
    with pytest.raises(ValueError, match=re.escape(
            "`package` must name a package folder; 'os' is a single module, which ships no "
            "data files. Received: package='os'")):
        datasets.catalog_locales("os")
    with pytest.raises(ValueError, match=re.escape(
            "`package` must be a package's name (a Python identifier), not a path. "
            "Received: package='/'")):
        datasets.catalog_locales("/")
