"""The ``arrowmm`` command line (also ``python -m arrowmm``)."""
from .main import main

__all__ = ["main"]
