"""A footer's metadata copied into a new file (``new_file(..., metadata=reader.metadata)``, the
round trip ``docs/writing.md`` shows) does not carry the old file's statistics along: a filter
would prune the new file's batches by the old file's values (rows silently lost)."""
import arrowmm


def test_footer_metadata_copied_by_arrowmm_leaves_the_statistics_behind(tmp_path):
    src, dst = tmp_path / "src.arrow", tmp_path / "dst.arrow"
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with arrowmm.new_file(src, schema, statistics=True, metadata={"owner": "me"}) as w:
        w.write({"x": [1, 2, 3]})
    with arrowmm.open_file(src) as reader:
        copied = reader.footer.metadata
    assert "arrowmm:statistics" in copied
    with arrowmm.new_file(dst, schema, metadata=copied) as w:
        w.write({"x": [100, 200, 300]})
    with arrowmm.open_file(dst) as reader:
        assert reader.footer.metadata == {"owner": "me"}
    got = arrowmm.dataset(str(dst)).to_table(filter=arrowmm.field("x") > 150)
    assert got.column("x").to_pylist() == [200, 300]
