"""python -m arrowmm: the same as the ``arrowmm`` command."""
import sys

from .cli import main

sys.exit(main())
