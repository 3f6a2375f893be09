"""Type stub for arrowmm._core._cabi: the Arrow C data / C stream interfaces' ABI (structs,
release callbacks, capsules; their C-level API is in _cabi.pxd)."""
from typing import Callable

__all__ = ["register_exporter", "exporter"]

# names: "schema", "array", "batch", "import_array", "import_batch" (registered by
# arrowmm.interop._cdata when it is imported)
def register_exporter(name: str, function: Callable[..., object]) -> None: ...
def exporter(name: str) -> Callable[..., object]: ...
