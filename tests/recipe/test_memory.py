"""`release_memory` frees garbage in reference cycles and trims glibc's heap."""

import gc
import platform
import sys

import numpy as np
import pytest

from keras_subembed.recipe import memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc/self/status")


def resident_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS line")


class Node:
    def __init__(self, payload):
        self.payload = payload
        self.itself = self  # a reference cycle: only the cyclic collector frees it


def test_garbage_in_a_cycle_goes_back_to_the_system():
    size = 256 * 2**20
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # no automatic collection may free it first
    try:
        node = Node(np.ones(size, np.uint8))  # ones: the pages are touched, resident
        del node
        held = resident_bytes()
        memory.release_memory()
        assert held - resident_bytes() > 0.9 * size
    finally:
        if enabled:
            gc.enable()


def test_the_heap_is_trimmed_where_glibc_offers_it(monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: calls.append)
    memory.release_memory()
    assert calls == [0]
    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)  # macOS, musl: collection only
    memory.release_memory()
    assert calls == [0]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's function")
def test_glibcs_malloc_trim_is_found():
    trim = memory._malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was released, 0: none could be
