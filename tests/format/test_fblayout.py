"""``fblayout.LAYOUTS`` says, for every table the Python readers open, each field's slot and
width: what the checks of FlatBuffers' verifier need (a field off its alignment is refused).
A wrong width would refuse good files or let a misaligned field through, so the table is
checked here against the generated builders (``<Table>Add<Field>`` writes each field with a
``Prepend<Type>Slot(slot, ...)`` of its type), and every generated table is in it."""
import importlib
import pkgutil

import pytest

import arrowmm
from arrowmm.format import _fbs
from arrowmm.format.fblayout import HEADER_MEMBERS, LAYOUTS, TYPE_MEMBERS, table_at

#: bytes written by each ``Prepend<Type>Slot`` of the FlatBuffers Python builder
_SLOT_WIDTHS = {"PrependBoolSlot": 1, "PrependInt8Slot": 1, "PrependUint8Slot": 1,
                "PrependInt16Slot": 2, "PrependUint16Slot": 2, "PrependInt32Slot": 4,
                "PrependUint32Slot": 4, "PrependFloat32Slot": 4, "PrependInt64Slot": 8,
                "PrependUint64Slot": 8, "PrependFloat64Slot": 8,
                "PrependUOffsetTRelativeSlot": 4, "PrependStructSlot": 16}  # (Buffer)


class _Recorder:
    """A stand-in builder that records the slot calls a generated ``Add`` function makes."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, method):
        return lambda *args: self.calls.append((method, args))


def _generated_tables():
    """name -> generated module, for each table of the generated code (structs have no
    ``Start``)."""
    out = {}
    for info in pkgutil.iter_modules(_fbs.__path__):
        module = importlib.import_module(f"{_fbs.__name__}.{info.name}")
        if hasattr(module, "Start"):
            out[info.name] = module
    return out


GENERATED = _generated_tables()


def test_every_generated_table_has_a_layout():
    assert len(GENERATED) > 30
    assert sorted(set(GENERATED) - set(LAYOUTS)) == []


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_a_layout_says_what_the_generated_builder_writes(name):
    module = GENERATED[name]
    start = _Recorder()
    module.Start(start)
    (method, (n_fields,)), = start.calls
    assert method == "StartObject"
    written = {}
    for attr in dir(module):
        if not attr.startswith(f"{name}Add"):
            continue
        builder = _Recorder()
        getattr(module, attr)(builder, 0)
        (method, (slot, *_)), = builder.calls
        written[slot] = (attr[len(name) + 3:].lower(), _SLOT_WIDTHS[method])
    assert sorted(written) == list(range(n_fields))
    assert [(field.replace("_", "").lower(), width) for field, width in LAYOUTS[name]] == \
        [written[slot] for slot in range(n_fields)]


def test_every_union_member_names_a_laid_out_table():
    assert set(TYPE_MEMBERS.values()) | set(HEADER_MEMBERS.values()) <= set(LAYOUTS)
    type_enum = importlib.import_module(f"{_fbs.__name__}.Type").Type
    assert {getattr(type_enum, name): name for name in TYPE_MEMBERS.values()} == TYPE_MEMBERS


def _root_table(vtable: bytes, table: bytes) -> bytes:
    """A flatbuffer: root offset, ``vtable`` at byte 4, then the table (its soffset first)."""
    pos = 4 + len(vtable)
    pos += -pos % 8
    head = (pos).to_bytes(4, "little") + vtable
    head += bytes(pos - len(head))
    return head + (pos - 4).to_bytes(4, "little", signed=True) + table


def test_table_at_names_the_table_the_field_and_the_byte():
    # Footer: version (int16) at table offset 4: 2-aligned, read
    good = _root_table(b"\x06\x00\x08\x00\x04\x00", b"\x04\x00\x00\x00")
    assert table_at("Footer", good, 0, "footer") == 16
    odd = _root_table(b"\x06\x00\x08\x00\x05\x00", b"\x04\x00\x00\x00")
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"^footer: Footer.version at byte 21: an address not a multiple of 2"):
        table_at("Footer", odd, 0, "footer")
    odd_vtable = _root_table(b"\x07\x00\x08\x00\x04\x00", b"\x04\x00\x00\x00")
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"^footer: Footer table at byte 16: its vtable's byte size 7 is odd"):
        table_at("Footer", odd_vtable, 0, "footer")
    with pytest.raises(arrowmm.ArrowInvalid, match=r"offset 0 of the Footer table at byte 0 is "
                                                   r"zero"):
        table_at("Footer", bytes(16), 0, "footer")
