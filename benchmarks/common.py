"""What both benchmark scripts print about the machine they ran on."""
import os
import platform

import numpy as np


def machine_lines(quick: bool) -> list:
    """Mode, machine, CPUs and library versions, as markdown list items."""
    import arrowmm
    import pyarrow as pa
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    return [f"- mode: {'quick (smoke)' if quick else 'full'}",
            f"- machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
            f"{cpus} CPUs ({usable} usable)",
            f"- python {platform.python_version()}, numpy {np.__version__}, pyarrow {pa.__version__}, "
            f"arrowmm {arrowmm.__version__}"]
