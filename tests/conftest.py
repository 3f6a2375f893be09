"""Shared test setup.

Test modules import their helpers (``helpers``, ``writer_support``, ``kernel_support``,
``spark_support``, ``integration_json``) by name: pytest puts this folder on ``sys.path``
because it is not a package.  The fuzz harness (``fuzz/harness.py``), whose readers the
differential and regression tests drive, is put there once, here.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "fuzz"))
