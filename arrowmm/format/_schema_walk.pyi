"""Type stub for arrowmm.format._schema_walk: a schema's fields vector read in C into
``types.Field`` objects (see _schema_walk.pyx)."""
from typing import Any, Callable

def schema_fields(data: Any, start: int, count: int, field_cls: type, types: dict,
                  make_type: Callable[[tuple, list], Any],
                  other: Callable[[int], Any], budget: list, md_cap: int) -> tuple: ...
