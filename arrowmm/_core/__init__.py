"""The Cython kernels: memory regions and views, bitmaps, offsets, UTF-8, Python lists,
FlatBuffers peeking, an arena for decoded memory, and the Arrow C data interface's ABI
(``_cabi``: structs, release callbacks, capsules).

Everything here works on bytes and numbers; it imports only the ground below it
(``errors``, ``limits``) and other kernels, and knows no arrowmm Python class.
Users never import these modules directly.
"""
