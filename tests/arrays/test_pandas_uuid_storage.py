"""A field named ``arrow.uuid`` over storage other than ``fixed_size_binary[16]`` converts
to pandas as its storage (review 22: F8): ``to_pandas`` read each value as a UUID and raised
a bare ``ValueError: bytes is not a 16-char string``.  (pyarrow refuses to read such a field;
arrowmm reads it as its storage, and ``to_pylist`` gives the bytes.)"""
import pyarrow as pa
import arrowmm


def test_uuid_name_over_other_storage_converts_as_the_storage(tmp_path):
    storage = pa.array([b"12345678", None], pa.binary(8))
    field = pa.field("c", storage.type, metadata={"ARROW:extension:name": "arrow.uuid",
                                                  "ARROW:extension:metadata": ""})
    path = str(tmp_path / "u.arrow")
    with pa.ipc.new_file(path, pa.schema([field])) as w:
        w.write(pa.record_batch([storage], schema=pa.schema([field])))
    batch = arrowmm.open_file(path).get_batch(0)
    values = storage.to_pylist()
    assert batch.to_pandas()["c"].tolist() == values
    assert arrowmm.open_file(path).read_all().to_pandas()["c"].tolist() == values
