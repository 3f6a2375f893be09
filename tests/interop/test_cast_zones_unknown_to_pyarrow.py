"""Zone names that Python's ``zoneinfo`` opens but pyarrow's tz database leaves out are refused
as pyarrow refuses them (review 15: 2): the leap-second ``right/`` zones, the ``posix/`` copies,
``posixrules`` and ``Factory``.  ``zoneinfo`` ignores the ``right/`` zones' leap seconds, so
their wall clocks came out 27 s (and at a DST change an hour) off."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm


@pytest.mark.parametrize("tz", ["right/UTC", "right/America/New_York", "posix/Europe/Paris",
                                "posixrules", "Factory"])
@pytest.mark.parametrize("target", [pa.string(), pa.date32(), pa.time32("s")], ids=str)
def test_zone_pyarrow_cannot_locate_is_refused(tz, target):
    source = pa.array([1_636_264_800, None], pa.timestamp("s", tz))
    with pytest.raises(pa.ArrowInvalid, match="not found in timezone database"):
        pc.cast(source, target)
    target_mm = arrowmm.array(pa.nulls(0, target)).type
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=f"Cannot locate or parse timezone '{tz}': {tz} not found in "
                             f"timezone database"):
        arrowmm.array(source).cast(target_mm)
