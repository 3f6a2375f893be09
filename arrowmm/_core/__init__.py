"""The Cython kernels: memory regions and views, bitmaps, offsets, UTF-8, Python lists,
FlatBuffers peeking and an arena for decoded memory.

Everything here works on bytes and numbers; it imports only the ground modules
(``errors``, ``limits``, ``types``) and other kernels, and knows no arrowmm Python class.
Users never import these modules directly.
"""
