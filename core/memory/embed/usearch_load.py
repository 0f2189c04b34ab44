"""usearch's ``Index``, loaded so that onnxruntime can still load after it.

usearch 2.26.6's compiled module, once loaded, makes a later ``import onnxruntime``
crash the process (Linux x86_64: ``python -c "import usearch.index; import onnxruntime"``
dies of SIGSEGV; the other order works). The approximate index needs usearch and the bge
embedder onnxruntime, and one process can need both in either order: the dashboard forgets
a memory (usearch), then embeds a loop's episodes with bge (onnxruntime). So usearch is
imported only here, and onnxruntime first when it is installed (~0.24 s, paid only where
the ``bge`` extra is installed; tests/core/memory/test_ann.py checks the order in a fresh
process). Remove this seam when both load in either order.
"""

from __future__ import annotations

import importlib.util
import sys


def usearch_index():
    """The ``usearch.index.Index`` class."""
    if "usearch.index" not in sys.modules and "onnxruntime" not in sys.modules \
            and importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401 - loaded before usearch, see the module's docstring
    from usearch.index import Index

    return Index
