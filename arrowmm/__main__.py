"""python -m arrowmm: the same as the ``arrowmm`` command."""
import sys

from .cli.main import main

sys.exit(main())
