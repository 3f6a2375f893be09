"""Tensors: the IPC ``Tensor`` (dense) and ``SparseTensor`` messages."""
