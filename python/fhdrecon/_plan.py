"""fhdrecon.Plan: a drop-in for finufft.Plan and cufinufft.Plan (types 1 and 2).

Same arguments, shapes and axis order as FINUFFT's Python interface: for
n_modes (N1, N2[, N3]) the mode array has that shape (C order) and its first
axis goes with the points x; modes run -N/2 .. N/2-1 on each axis
(modeord 0); points are radians, any real value taken modulo 2 pi; type 1
computes f[k] = sum_j c_j exp(isign i k.x_j) (isign +1 by default), type 2
c_j = sum_k f[k] exp(isign i k.x_j) (isign -1 by default); no normalization.
Single precision (complex64), as cufinufft's default. The plan runs where its
arrays are: NumPy on the CPU, CuPy or PyTorch CUDA arrays on their GPU, or
where the option device= says.
"""
import re
import threading

import numpy as np

from . import _arrays
from ._args import whole as _whole
from ._core import NufftHandle

# FINUFFT / cuFINUFFT options that only tune speed there: accepted and ignored.
_IGNORED = {
    "debug", "spread_debug", "showwarn", "spread_sort", "spread_kerevalmeth", "spread_kerpad", "fftw",
    "chkbnds", "spread_thread", "maxbatchsize", "spread_nthr_atomic", "spread_max_sp_size",
    "fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data", "spreadinterponly", "spread_function",
    "gpu_method", "gpu_sort", "gpu_kerevalmeth", "gpu_spreadinterponly", "gpu_maxsubprobsize",
    "gpu_obinsizex", "gpu_obinsizey", "gpu_obinsizez", "gpu_binsizex", "gpu_binsizey", "gpu_binsizez",
    "gpu_maxbatchsize", "gpu_np", "gpu_device_id_", "nthreads", "spread_simd", "hint_nj",
}


# The C interface's bounds: modes per axis (1 is an axis of one mode, k = 0, as
# in FINUFFT), and what its int arguments hold.
_MAX_MODES = 65536
_INT_MAX = 2**31 - 1


def _caller_axes(message, dim):
    """The C interface's point arrays (x[j], y[j], z[j]) named as the caller
    gave them: the points go to it reversed."""
    names = "xyz"[:dim]
    return re.sub(r"\b([xyz])\[", lambda m: names[dim - 1 - names.index(m.group(1))] + "[", message)


class Plan:
    """A type 1 or type 2 NUFFT plan (FINUFFT's guru interface).

    Parameters
    ----------
    nufft_type : int
        1 (nonuniform points to modes) or 2 (modes to points). Type 3 is not offered.
    n_modes : tuple of int
        (N1, N2) or (N1, N2, N3): modes per dimension.
    n_trans : int
        How many vectors each execute() transforms (coils, for instance).
    eps : float
        Requested relative accuracy, 1e-7 .. 1e-1 (below 1e-7 is taken as 1e-7).
    isign : int or None
        Sign of the exponent; None is +1 for type 1 and -1 for type 2.
    dtype : str
        'complex64' (the only one: fhdrecon computes in single precision).
    device : str or int, optional
        'cpu', 'cuda' / 'gpu' (GPU 0), 'cuda:N', or a GPU id. Default: where the
        points given to setpts() are (cuFINUFFT's gpu_device_id is accepted too).
    modeord : int
        0 only (FINUFFT's default order -N/2 .. N/2-1).
    upsampfac : float
        2.0 (default) or 1.25 (the smaller fine grid; eps below 1e-4 uses 2.0, on the CPU and
        the GPU: single precision cannot reach it on the 1.25 grid).
    gpu_stream : int
        A CUDA stream (cudaStream_t as an integer); default the array library's current stream.

    Other FINUFFT and cuFINUFFT options that only tune speed are accepted and ignored.
    """

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", **kwargs):
        if nufft_type not in (1, 2):
            raise ValueError(f"nufft_type = {nufft_type!r}: fhdrecon offers types 1 and 2")
        if np.ndim(n_modes) == 0:
            n_modes = (n_modes,)
        n_modes = tuple(_whole(f"n_modes[{a}]", n, 1, _MAX_MODES) for a, n in enumerate(n_modes))
        if len(n_modes) not in (2, 3):
            raise ValueError(f"n_modes = {n_modes}: fhdrecon offers 2 and 3 dimensions")
        if sum(n > 1 for n in n_modes) < 2:  # said here: the core sees the axes reversed (x fastest)
            raise ValueError(f"n_modes = {n_modes}: at least two axes need 2 or more modes (an axis of 1 mode "
                             "is dropped; a 1D transform is not offered)")
        if np.dtype(dtype) != np.complex64:
            raise TypeError(f"dtype = {dtype}: fhdrecon computes in single precision (complex64)")
        self.type = int(nufft_type)
        self.n_modes = n_modes
        self.dim = len(n_modes)
        self.n_trans = _whole("n_trans", n_trans, 1, _INT_MAX)
        self.eps = float(eps)
        self.isign = (1 if self.type == 1 else -1) if isign is None else _whole("isign", isign, -1, 1)
        if self.isign == 0:
            raise ValueError("isign = 0: must be +1 or -1")
        self.dtype = np.dtype(np.complex64)
        self.real_dtype = np.dtype(np.float32)
        self._device = _device_option(kwargs)
        self._upsampfac = float(kwargs.pop("upsampfac", kwargs.pop("gpu_upsampfac", 0.0)) or 0.0)
        self._stream = kwargs.pop("gpu_stream", None)
        if self._stream is not None:
            self._stream = _whole("gpu_stream", self._stream, 0, 2**64 - 1)  # a cudaStream_t
        modeord = kwargs.pop("modeord", kwargs.pop("gpu_modeord", 0))
        if modeord != 0:
            raise ValueError(f"modeord = {modeord}: fhdrecon supports 0 only (modes -N/2 .. N/2-1)")
        unknown = set(kwargs) - _IGNORED
        if unknown:
            raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
        self._handle = None
        self._like = None  # an array of the library the plan's arrays come from
        self.nj = 0
        self._points = None  # True: the last setpts set points; False: it was refused (leaving none)
        # setpts and execute one at a time: execute's shapes come from the
        # points, which another thread's setpts may be changing.
        self._lock = threading.Lock()

    @property
    def device(self):
        """'cpu' or 'cuda:N' once points are set, else the requested device (or None)."""
        if self._handle is None:
            return self._device
        d = self._handle.device
        return "cpu" if d < 0 else f"cuda:{d}"

    def setpts(self, x=None, y=None, z=None, s=None, t=None, u=None):
        """Sets the nonuniform points, radians; y (and z in 3D) as x. Copied: the
        arrays may change after the call."""
        if s is not None or t is not None or u is not None:
            raise ValueError("s, t, u are type 3's target points: fhdrecon offers types 1 and 2")
        pts = [x, y, z][: self.dim]
        if any(p is None for p in pts):
            raise ValueError(f"a {self.dim}D plan needs x, y" + (" and z" if self.dim == 3 else ""))
        pts = [_arrays.ensure(p, "float32", n) for p, n in zip(pts, "xyz")]
        shapes = {tuple(p.shape) for p in pts}
        if len(shapes) != 1 or len(pts[0].shape) != 1:
            raise ValueError("x, y (and z) must be 1-D arrays of the same length")
        with self._lock:
            self._set(pts)

    def _set(self, pts):
        self._make(pts[0])
        # FINUFFT's first axis is the slowest in C order: the C interface, first
        # fastest, gets the modes and points reversed (as finufft's Python does).
        rev = pts[::-1]
        try:
            self._handle.setpts(rev[0], rev[1], rev[2] if self.dim == 3 else None)
        except ValueError as e:  # "x[7] = nan" names the C side's x: this call's last array
            self._points = False
            raise ValueError(_caller_axes(str(e), self.dim)) from None
        self._points = True
        self.nj = int(pts[0].shape[0])
        self._like = pts[0]

    def execute(self, data, out=None):
        """Type 1: data (n_trans, M) or (M,) -> modes (n_trans, *n_modes) or n_modes.
        Type 2: data (n_trans, *n_modes) or n_modes -> (n_trans, M) or (M,).
        `out`, when given, receives the result (complex64, contiguous, same place)."""
        with self._lock:
            return self._execute(data, out)

    def _execute(self, data, out):
        if self._points is False:
            raise ValueError("execute after a refused setpts: the plan has no points; call setpts with valid ones")
        if self._handle is None or not self._points:
            raise ValueError("execute before setpts")
        data = _arrays.ensure(data, "complex64", "data")
        batch = self._batch_shape(data)
        out_shape = batch + (self.n_modes if self.type == 1 else (self.nj,))
        if out is None:
            out = _arrays.empty(out_shape, "complex64", self._like)
        else:
            _arrays.check_out(out, out_shape)
        c, f = (data, out) if self.type == 1 else (out, data)
        self._handle.execute(c, f)
        return out

    def _batch_shape(self, data):
        per = (self.nj,) if self.type == 1 else self.n_modes
        shape = tuple(data.shape)
        if shape == per and self.n_trans == 1:
            return ()
        if shape == (self.n_trans,) + per:
            return (self.n_trans,)
        raise ValueError(f"data has shape {shape}: expected {(self.n_trans,) + per}" +
                         (f" or {per}" if self.n_trans == 1 else ""))

    def _make(self, like):
        """The compiled plan, made on the first setpts where its points are
        (or where device= says), and again if later points are elsewhere."""
        where = _arrays.gpu_id(like)
        device = self._device_id(where)
        if self._handle is not None and self._handle.device == device:
            return
        stream = self._stream if self._stream is not None else (_arrays.current_stream(like) if device >= 0 else 0)
        self._handle = NufftHandle(self.type, list(self.n_modes[::-1]), self.isign, self.n_trans, self.eps,
                                   device, int(stream), self._upsampfac)

    def _device_id(self, where):
        d = self._device
        if d is None:
            return -1 if where is None else where
        if d == "cpu":
            return -1
        return d

    def __copy__(self):
        # A shallow copy shared the compiled plan: setpts on it changed the original.
        raise TypeError(_NO_COPY)

    def __deepcopy__(self, memo):
        raise TypeError(_NO_COPY)

    def __reduce_ex__(self, protocol):
        raise TypeError(_NO_COPY)

    def __del__(self):
        self._handle = None


_NO_COPY = ("a fhdrecon.Plan cannot be copied or pickled (its compiled plan holds the points): "
            "make another Plan with the same arguments and call its setpts")


def _device_option(kwargs):
    """device= / gpu_device_id= as None (the arrays decide), 'cpu' or a GPU id."""
    d = kwargs.pop("device", None)
    gid = kwargs.pop("gpu_device_id", None)
    if d is None and gid is not None:
        return _gpu(gid)
    if d is None:
        return None
    if isinstance(d, (int, np.integer)):
        return _gpu(d)
    d = str(d)
    if d == "cpu":
        return "cpu"
    if d in ("cuda", "gpu"):
        return 0 if gid is None else _gpu(gid)
    if d.startswith(("cuda:", "gpu:")) and d.split(":")[1].isdigit():
        return _gpu(int(d.split(":")[1]))
    raise ValueError(f"device = {d}: expected 'cpu', 'cuda', 'cuda:N' or a GPU id")


def _gpu(gid):
    """A GPU id, 0 .. INT_MAX."""
    return _whole("device", gid, 0, _INT_MAX)
