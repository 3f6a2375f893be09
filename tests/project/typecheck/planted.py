"""Errors planted on purpose: ``tests/project/test_typing.py`` expects pyright and mypy each to report
every line marked ``# planted``, which proves they read arrowmm's hints (a checker that saw
only ``Any`` would pass ``examples.py`` and miss all of these)."""
import arrowmm


def planted_errors() -> None:
    arrowmm.int64(64)  # planted: a type factory that takes no argument
    schema = arrowmm.schema([("a", arrowmm.int64())])
    rows: str = arrowmm.record_batch({"a": [1]}, schema).num_rows  # planted: an int
    print(schema.field("a").nmae)  # planted: Field has no such attribute
    arrowmm.open_file("data.arrow").get_batch("0")  # planted: an index, not a str
    arrowmm.dataset("folder").to_tabel()  # planted: Dataset has no such method
    print(rows)
