"""Type stub for arrowmm._core._cabi: the Arrow C data / C stream interfaces' ABI (structs,
release callbacks, capsules; their C-level API is in _cabi.pxd, and nothing of it is called from
Python: the typed classes reach the C interface through ``arrowmm.hooks``)."""

__all__: list[str] = []
