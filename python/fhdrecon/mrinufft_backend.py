"""MRI-NUFFT backend "fhdrecon" (docs/python.md, "MRI-NUFFT").

Defining the subclass registers it: MRI-NUFFT's FourierOperatorBase records
every subclass with a `backend` name in FourierOperatorBase.interfaces, so
`import fhdrecon` (which imports this module when mrinufft is installed) makes
`mrinufft.get_operator("fhdrecon")` work.

The operator is MRI-NUFFT's FourierOperatorSimple (coils, sensitivity maps,
density compensation and batches as MRI-NUFFT passes them, written once for
NumPy and CuPy arrays) over fhdrecon.Plan, in the shape of its finufft
backend. Where it runs: on the CPU, unless the samples are CUDA arrays or
device="gpu" / "cuda" / "cuda:N" (or gpu_device_id=N) is given; then on that
GPU, with CuPy arrays inside (PyTorch CUDA tensors cross by DLPack, NumPy
arrays are uploaded) and results returned in the caller's array library.
"""
import numpy as np
from mrinufft._array_compat import _to_interface, get_array_module, with_numpy
from mrinufft._utils import proper_trajectory
from mrinufft.operators.base import FourierOperatorSimple, _ToggleGradPlanMixin

from . import _arrays
from ._plan import Plan


def _on_gpu(samples, device, gpu_device_id):
    """The GPU id the operator runs on, or None for the CPU."""
    if device is None:
        if gpu_device_id is not None:
            return int(gpu_device_id)
        return _arrays.gpu_id(samples)
    if isinstance(device, (int, np.integer)):
        return int(device)
    d = str(device)
    if d == "cpu":
        return None
    if d in ("gpu", "cuda"):
        return int(gpu_device_id or 0)
    return int(d.split(":")[1])


class RawFhdreconPlan:
    """One type 1 and one type 2 fhdrecon.Plan on the same points (the finufft
    backend's RawFinufftPlan, with fhdrecon's plans)."""

    def __init__(self, samples, shape, n_trans=1, eps=1e-6, device=None, **kwargs):
        self.shape = tuple(shape)
        self.n_trans = n_trans
        self.eps = float(eps)
        self.n_samples = len(samples)
        self.device = device
        self.kwargs = kwargs
        self.plans = [None, None, None]
        self.grad_plan = None
        for typ in (1, 2):
            self.plans[typ] = self._make(typ)
            self._set_pts(typ, samples)

    def _make(self, typ, isign=None):
        dev = "cpu" if self.device is None else self.device
        return Plan(typ, self.shape, self.n_trans, self.eps, isign=isign, device=dev, **self.kwargs)

    def _set_pts(self, typ, samples):
        plan = self.grad_plan if typ == "grad" else self.plans[typ]
        xp = get_array_module(samples)
        plan.setpts(*[xp.ascontiguousarray(samples[:, i]) for i in range(len(self.shape))])

    def adj_op(self, coeffs_data, grid_data):
        """Type 1: nonuniform to uniform, into grid_data."""
        if self.n_trans == 1:
            grid_data = grid_data.reshape(self.shape)
            coeffs_data = coeffs_data.reshape(self.n_samples)
        return self.plans[1].execute(coeffs_data, grid_data)

    def op(self, coeffs_data, grid_data):
        """Type 2: uniform to nonuniform, into coeffs_data."""
        if self.n_trans == 1:
            grid_data = grid_data.reshape(self.shape)
            coeffs_data = coeffs_data.reshape(self.n_samples)
        return self.plans[2].execute(grid_data, coeffs_data)

    def toggle_grad_traj(self):
        """Swaps the type 2 plan with the gradient's (isign +1) one."""
        self.plans[2], self.grad_plan = self.grad_plan, self.plans[2]


def _with_cupy(fun, device):
    """Runs fun on CuPy arrays of GPU `device` and returns its result in the
    array library (and device) of the first array argument."""
    import cupy

    def wrapper(*args, **kwargs):
        lead = next((a for a in list(args) + list(kwargs.values()) if hasattr(a, "shape")), None)
        xp = get_array_module(lead) if lead is not None else np
        where = getattr(lead, "device", "cpu")
        with cupy.cuda.Device(device):
            args = [cupy.asarray(a) if hasattr(a, "shape") else a for a in args]
            kwargs = {k: cupy.asarray(v) if hasattr(v, "shape") else v for k, v in kwargs.items()}
            ret = fun(*args, **kwargs)
        return _to_interface(ret, xp, where)

    wrapper.__doc__ = fun.__doc__
    return wrapper


class MRIfhdrecon(FourierOperatorSimple, _ToggleGradPlanMixin):
    """MRI-NUFFT operator over fhdrecon's NUFFT (CPU or GPU).

    Parameters are MRI-NUFFT's (samples, shape, density, n_coils, n_batchs,
    n_trans, smaps, squeeze_dims) and fhdrecon.Plan's (eps, upsampfac, ...);
    device (or gpu_device_id) picks the GPU (see the module's docstring).
    """

    backend = "fhdrecon"
    available = True
    autograd_available = True

    def __init__(self, samples, shape, density=False, n_coils=1, n_batchs=1, n_trans=1, smaps=None,
                 squeeze_dims=True, device=None, gpu_device_id=None, **kwargs):
        self._gpu = _on_gpu(samples, device, gpu_device_id)
        if (n_batchs * n_coils) % n_trans != 0:
            raise ValueError("n_batchs * n_coils should be a multiple of n_trans")
        host = proper_trajectory(_to_host(samples), normalize="pi")
        samples = np.asarray(host, dtype=np.float32 if host.dtype != np.float64 else np.float64)
        xp_samples = self._xp_array(np.ascontiguousarray(samples, dtype=np.float32))
        self.raw_op = RawFhdreconPlan(xp_samples, shape, n_trans=n_trans, device=self._gpu, **kwargs)
        super().__init__(samples.astype(np.float32), shape, density, n_coils=n_coils, n_batchs=n_batchs,
                         n_trans=n_trans, smaps=smaps, raw_op=self.raw_op, squeeze_dims=squeeze_dims)
        self._move_to_device()
        if self._gpu is None:
            self.op = with_numpy(self.op)
            self.adj_op = with_numpy(self.adj_op)
            self.data_consistency = with_numpy(self.data_consistency)
        else:
            self.op = _with_cupy(self.op, self._gpu)
            self.adj_op = _with_cupy(self.adj_op, self._gpu)
            self.data_consistency = _with_cupy(self.data_consistency, self._gpu)

    def _xp_array(self, a):
        if self._gpu is None or a is None:
            return a
        import cupy

        with cupy.cuda.Device(self._gpu):
            return cupy.asarray(a)

    def _move_to_device(self):
        """On a GPU the maps and density weights live there too."""
        if self._gpu is None:
            return
        if self._smaps is not None:
            self._smaps = self._xp_array(np.asarray(_to_host(self._smaps), dtype=self.cpx_dtype))
        if self._density is not None:
            self._density = self._xp_array(np.asarray(_to_host(self._density)))

    @FourierOperatorSimple.smaps.setter
    def smaps(self, new_smaps):
        FourierOperatorSimple.smaps.fset(self, new_smaps)
        if getattr(self, "_gpu", None) is not None and self._smaps is not None:
            self._move_to_device()

    def update_samples(self, new_samples, unsafe=False):
        """New sample locations for both plans (and the gradient's)."""
        if not unsafe:
            new_samples = np.asarray(proper_trajectory(_to_host(new_samples), normalize="pi"), dtype=np.float32)
        self._samples = np.asarray(_to_host(new_samples), dtype=np.float32)
        dev = self._xp_array(np.ascontiguousarray(self._samples))
        for typ in (1, 2, "grad"):
            if typ == "grad" and not getattr(self, "_grad_wrt_traj", False):
                continue
            self.raw_op._set_pts(typ, dev)
        self.compute_density(self._density_method)
        self._move_to_device()

    @classmethod
    def pipe(cls, kspace_loc, volume_shape, max_iter=10, osf=2, normalize=True, **kwargs):
        """Density compensation weights by Pipe and Menon's fixed point
        d <- d / (K * d), K a positive kernel about one k-space cell wide:
        K * d = A (g A^H d), A fhdrecon's NUFFT onto round(osf N) modes and g
        a Gaussian over those modes, whose Fourier series K is a Gaussian of
        0.7 cells' deviation (fhdrecon has no spread-only mode). Without g, K
        was the modes' Dirichlet kernel, whose negative lobes sent the fixed
        point away from the density: weights over 9 decades, and images worse
        with more iterations (docs/python.md). osf is at least 2, so g is 6e-5
        at the modes' edge and K has no ripple to speak of. normalize as
        MRI-NUFFT's finufft backend: the mean of |A^H d A 1| is 1."""
        shape = tuple(max(2, int(round(max(osf, 2) * n))) for n in volume_shape)
        grid_op = cls(kspace_loc, shape, **kwargs)
        g = _gaussian_window(shape, volume_shape, cells=0.7)
        d = np.ones(grid_op.n_samples, dtype=np.complex64)
        for _ in range(max_iter):
            image = _to_host(grid_op.adj_op(d)).reshape(shape) * g
            d = d / np.abs(_to_host(grid_op.op(image.astype(np.complex64))).ravel())
        if normalize:
            test_op = cls(kspace_loc, volume_shape, **kwargs)
            ones = np.ones(volume_shape, dtype=np.complex64)
            d = d / np.mean(np.abs(_to_host(test_op.adj_op(d * _to_host(test_op.op(ones)).ravel()))))
        return np.abs(d).astype(np.float32)

    def _make_plan_grad(self, **kwargs):
        self.raw_op.grad_plan = self.raw_op._make(2, isign=1)
        self.raw_op._set_pts("grad", self._xp_array(np.ascontiguousarray(self.samples, dtype=np.float32)))


def _gaussian_window(shape, volume_shape, cells):
    """exp(-m^2 / 2 s^2) over the centred modes m of each axis of `shape`,
    with s = n / (2 pi cells) for the axis's n voxels of the volume: its
    Fourier series is a Gaussian of `cells` k-space cells' deviation."""
    g = np.ones(shape, dtype=np.float32)
    for axis, (m, n) in enumerate(zip(shape, volume_shape)):
        s = n / (2 * np.pi * cells)
        modes = np.arange(m) - m // 2
        along = np.exp(-modes.astype(np.float64) ** 2 / (2 * s * s)).astype(np.float32)
        g = g * along.reshape([-1 if a == axis else 1 for a in range(len(shape))])
    return g


def _to_host(a):
    """A NumPy copy of any array (CuPy, PyTorch), or `a` itself when it is one."""
    if a is None or isinstance(a, (bool, str, dict)) or callable(a):
        return a
    k = _arrays.kind(a)
    if k == "cupy":
        return a.get()
    if k == "torch":
        return a.detach().cpu().numpy()
    return np.asarray(a)
