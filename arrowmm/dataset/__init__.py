"""Many files read as one table: ``arrowmm.dataset(source, partitioning="hive")``.

This package is also callable: ``arrowmm.dataset(...)`` is ``arrowmm.dataset.dataset(...)``
(pyarrow's ``pyarrow.dataset.dataset``), which makes a ``Dataset``.  ``discovery`` finds the
files (folders walked, Spark manifests honoured, globs; the Spark source shares it),
``partitioning`` reads ``key=value`` folders, ``filters`` judges pyarrow.parquet's
list-of-tuples filters (partition values, footer statistics, rows), ``scan`` reads.
"""
import sys
import types as _types

from .scan import Dataset, dataset

__all__ = ["Dataset", "dataset"]


class _CallableModule(_types.ModuleType):
    """The ``arrowmm.dataset`` package, which, called, opens a dataset."""

    def __call__(self, source, *, partitioning=None, format=None, schema=None,  # noqa: A002
                 filesystem=None, filter=None, exclude_invalid_files: bool = False,
                 storage_options=None, mmap: bool = True) -> Dataset:
        return dataset(source, partitioning=partitioning, format=format, schema=schema,
                       filesystem=filesystem, filter=filter,
                       exclude_invalid_files=exclude_invalid_files,
                       storage_options=storage_options, mmap=mmap)

    __call__.__doc__ = dataset.__doc__


sys.modules[__name__].__class__ = _CallableModule
