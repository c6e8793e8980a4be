"""Array libraries the tests run on: NumPy always; CuPy and PyTorch CUDA
arrays where installed with a usable GPU (the device script's step `python`).
GPU tests carry the mark `gpu`."""
import os

import numpy as np
import pytest


def _cupy():
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:
        return None


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


CUPY = _cupy()
TORCH = _torch()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (CuPy or PyTorch) and fhdrecon built with CUDA")


class Lib:
    """Moves NumPy arrays to one array library and back."""

    def __init__(self, name):
        self.name = name

    def put(self, a):
        if self.name == "cupy":
            return CUPY.asarray(a)
        if self.name == "torch":
            return TORCH.from_numpy(np.ascontiguousarray(a)).to("cuda")
        return a

    def get(self, a):
        if self.name == "cupy":
            return CUPY.asnumpy(a)
        if self.name == "torch":
            return a.cpu().numpy()
        return np.asarray(a)


def _libs():
    out = [pytest.param("numpy", id="numpy")]
    gpu = pytest.mark.gpu
    out.append(pytest.param("cupy", id="cupy", marks=[gpu, pytest.mark.skipif(CUPY is None, reason="no CuPy with a GPU")]))
    out.append(pytest.param("torch", id="torch", marks=[gpu, pytest.mark.skipif(TORCH is None, reason="no PyTorch with a GPU")]))
    return out


@pytest.fixture(params=_libs())
def lib(request):
    import fhdrecon

    if request.param != "numpy" and not fhdrecon.has_cuda():
        pytest.skip("fhdrecon built without CUDA")
    return Lib(request.param)


@pytest.fixture
def fhdrecon_exe():
    """The CLI of the same build (FHDRECON_EXE, else build/fhdrecon)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.environ.get("FHDRECON_EXE", os.path.join(root, "build", "fhdrecon"))
    if not os.access(exe, os.X_OK):
        pytest.skip(f"no fhdrecon CLI at {exe} (set FHDRECON_EXE)")
    return exe
