"""Data coming in: Python values and numpy arrays built into Arrow arrays, and the Arrow
C data / C stream interfaces (PyCapsules) in both directions.
"""
from .build import array, record_batch
from .interchange import RecordBatchReader

__all__ = ["array", "record_batch", "RecordBatchReader"]
