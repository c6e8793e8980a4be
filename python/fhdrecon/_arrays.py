"""Which array library an array belongs to, and arrays made by the same one.

NumPy arrays stay on the host; CuPy arrays and PyTorch tensors on a GPU are
handed to the compiled core through DLPack, so nothing crosses to the host.
"""
import warnings

import numpy as np


def kind(a):
    """'numpy', 'cupy' or 'torch'."""
    mod = type(a).__module__.split(".")[0]
    if mod == "cupy":
        return "cupy"
    if mod == "torch":
        return "torch"
    return "numpy"


def gpu_id(a):
    """The CUDA device of `a`, or None when it is in host memory."""
    k = kind(a)
    if k == "cupy":
        return int(a.device.id)
    if k == "torch":
        return a.device.index if a.device.type == "cuda" else None
    return None


def current_stream(a):
    """The stream the array library is using now on `a`'s device (0: the default)."""
    k = kind(a)
    if k == "cupy":
        import cupy

        with cupy.cuda.Device(a.device.id):
            return cupy.cuda.get_current_stream().ptr
    if k == "torch" and a.device.type == "cuda":
        import torch

        return torch.cuda.current_stream(a.device).cuda_stream
    return 0


def ensure(a, dtype, name, like=None):
    """`a` as a C-contiguous array of `dtype` ('float32' or 'complex64') in its
    own library (NumPy for lists). A dtype change copies and warns, as
    FINUFFT's Python interface does; a non-contiguous array is copied."""
    k = kind(a)
    if k == "torch":
        import torch

        want = getattr(torch, dtype)
        if a.dtype != want:
            _warn_dtype(name, a.dtype, dtype)
            a = a.to(want)
        return a.contiguous()
    if k == "cupy":
        import cupy

        if a.dtype != np.dtype(dtype):
            _warn_dtype(name, a.dtype, dtype)
        return cupy.ascontiguousarray(a, dtype=dtype)
    arr = np.asarray(a)
    if arr.dtype != np.dtype(dtype):
        _warn_dtype(name, arr.dtype, dtype)
    arr = np.ascontiguousarray(arr, dtype=dtype)
    # The compiled side takes writable arrays only (a read-only one failed with
    # "std::bad_cast"): an input that is read-only (a memory-mapped file,
    # np.broadcast_to) is copied; it is only read.
    return arr if arr.flags.writeable else arr.copy()


def _warn_dtype(name, got, want):
    warnings.warn(
        f"Argument `{name}` does not have the correct dtype: {got} was given, but {want} was expected. "
        "Converting to match (fhdrecon computes in single precision).",
        stacklevel=4,
    )


def empty(shape, dtype, like):
    """An uninitialized array of `shape` in the library and device of `like`."""
    k = kind(like)
    if k == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if k == "cupy":
        import cupy

        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)



def check_out(out, shape):
    """An `out` argument must take the result in place: complex64, contiguous,
    of `shape` (or its size, as FINUFFT allows)."""
    k = kind(out)
    if k == "numpy" and not isinstance(out, np.ndarray):
        raise ValueError(f"out must be an array that takes the result, not {type(out).__name__}")
    if k == "torch":
        import torch

        ok_dtype, contiguous = out.dtype == torch.complex64, out.is_contiguous()
    else:
        ok_dtype, contiguous = out.dtype == np.complex64, bool(out.flags.c_contiguous)
    if not ok_dtype or not contiguous:
        raise ValueError(f"out must be a contiguous complex64 array (got {out.dtype}, contiguous={contiguous})")
    if k == "numpy" and not out.flags.writeable:
        raise ValueError("out is read-only: it must take the result")
    size = 1
    for n in out.shape:
        size *= int(n)
    want = 1
    for n in shape:
        want *= int(n)
    if tuple(out.shape) != tuple(shape) and size != want:
        raise ValueError(f"out has shape {tuple(out.shape)}: expected {tuple(shape)}")
