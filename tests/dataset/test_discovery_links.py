"""Symbolic links in a dataset folder (round 3 review, finding 6): a link back to a folder the
walk is inside is refused, naming it (it repeated every row 41 times; two such links hung
``arrowmm.dataset``); a link named as Arrow whose target is gone raises, naming it (its rows
left the dataset silently); links to folders beside the walk are still followed."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import fsspec
import numpy as np
import pytest

import arrowmm
from arrowmm.dataset.discovery import data_files_in


def _folder_with_one_file(tmp_path):
    (tmp_path / "a").mkdir()
    arrowmm.write_file(str(tmp_path / "a" / "f.arrow"), {"x": np.arange(3)})


def test_two_links_back_up_the_tree_are_refused_naming_the_link_not_walked_forever(tmp_path):
    # a/up -> .. and a/same -> ../a: 2**40 paths before this change (arrowmm.dataset never
    # returned).  The walk runs in a child so that a regression fails the test instead of
    # hanging the suite.
    _folder_with_one_file(tmp_path)
    os.symlink("..", tmp_path / "a" / "up")
    os.symlink("../a", tmp_path / "a" / "same")
    child = textwrap.dedent(f"""
        import arrowmm
        try:
            print("read", arrowmm.dataset({str(tmp_path)!r}).to_table().num_rows, "rows")
        except arrowmm.ArrowInvalid as exc:
            print(exc)
    """)
    try:
        run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                             timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("arrowmm.dataset() over a folder with two links up its tree did not return "
                    "in 120 s")
    assert run.returncode == 0, run.stderr[-500:]
    # the first loop met, in name order: a/same, which leads back to a
    said = run.stdout
    assert f"{tmp_path / 'a' / 'same'} (a symbolic link to '../a'): a folder loop: it leads " \
           f"back to {tmp_path / 'a'}, a folder the dataset's walk is already inside" in said


def test_a_link_to_the_parent_folder_is_refused_and_a_link_beside_the_walk_is_read(tmp_path):
    _folder_with_one_file(tmp_path)
    os.symlink("..", tmp_path / "a" / "up")  # 41 paths of a/f.arrow before: 123 rows
    with pytest.raises(arrowmm.ArrowInvalid, match=r"a/up \(a symbolic link to '\.\.'\): a "
                                                   r"folder loop: it leads back to "):
        arrowmm.dataset(str(tmp_path))
    # the same loop met from a glob's folder, and from a partitioned walk
    with pytest.raises(arrowmm.ArrowInvalid, match="folder loop"):
        arrowmm.dataset(str(tmp_path / "*"))
    with pytest.raises(arrowmm.ArrowInvalid, match="folder loop"):
        arrowmm.dataset(str(tmp_path), partitioning="hive")
    os.unlink(tmp_path / "a" / "up")
    os.symlink("a", tmp_path / "b")  # beside the walk: b is a itself, never inside it
    assert arrowmm.dataset(str(tmp_path)).files == [str(tmp_path / "a" / "f.arrow"),
                                                    str(tmp_path / "b" / "f.arrow")]
    assert arrowmm.dataset(str(tmp_path)).to_table().num_rows == 6


def test_a_dangling_link_named_as_arrow_raises_naming_it_locally_and_over_fsspec(tmp_path):
    _folder_with_one_file(tmp_path)
    gone = tmp_path / "share" / "g.arrow"  # (a symlink farm over a share unmounted since)
    os.symlink(gone, tmp_path / "a" / "g.arrow")
    os.symlink(tmp_path / "a" / "loop.arrow", tmp_path / "a" / "loop.arrow")
    os.symlink(gone, tmp_path / "a" / "notes.txt")  # not named as data: not part of it
    with pytest.raises(FileNotFoundError, match=f"a symbolic link to '{gone}', named as an "
                                                f"Arrow file of the dataset") as caught:
        arrowmm.dataset(str(tmp_path))
    assert caught.value.filename == str(tmp_path / "a" / "g.arrow")
    with pytest.raises(FileNotFoundError):  # (an OSError is not an invalid file: pyarrow's rule)
        arrowmm.dataset(str(tmp_path), exclude_invalid_files=True)
    with pytest.raises(FileNotFoundError, match="g.arrow"):  # the Spark source's listing
        data_files_in(str(tmp_path / "a"))
    os.unlink(tmp_path / "a" / "g.arrow")
    with pytest.raises(OSError, match="Too many levels of symbolic links") as caught:
        arrowmm.dataset(str(tmp_path))
    assert caught.value.filename == str(tmp_path / "a" / "loop.arrow")
    os.unlink(tmp_path / "a" / "loop.arrow")
    assert arrowmm.dataset(str(tmp_path)).to_table().num_rows == 3
    # fsspec's local filesystem lists links without following folders (no loop to walk) and
    # lists a dangling link named as Arrow, which raises when read: never silently missing
    os.symlink(gone, tmp_path / "a" / "g.arrow")
    os.symlink("..", tmp_path / "a" / "up")
    ds = arrowmm.dataset(str(tmp_path), filesystem=fsspec.filesystem("file"))
    assert ds.files == [str(tmp_path / "a" / "f.arrow"), str(tmp_path / "a" / "g.arrow")]
    with pytest.raises(OSError, match="g.arrow"):
        ds.to_table()
