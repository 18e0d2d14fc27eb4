"""Hand the memory of a finished stage back to the system, between a shrink's stages."""

import ctypes
import gc
import sys


def _malloc_trim():
    """glibc's `malloc_trim`, or None where the C library has none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None


def release_memory():
    """Collects the garbage held in reference cycles and returns the freed heap to the
    system.

    A stage of a shrink leaves large garbage that only Python's next full collection
    reaches: the distillers' traced steps, each export's TensorFlow graphs and converter
    buffers. One ONNX export of multilingual-e5-small's student left 2.7 GB of it
    (benchmarks/RESULTS.md, "Peak memory of the default job"). And glibc keeps freed
    pages in its arenas, so the process stays at its high-water mark unless
    `malloc_trim(0)` hands them back. Without glibc only the collection runs.

    Example:

    >>> from keras_subembed.recipe.memory import release_memory
    >>> release_memory()
    """
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
