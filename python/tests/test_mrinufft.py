"""The MRI-NUFFT backend against MRI-NUFFT's finufft backend (a few cases;
scripts/mrinufft-tests.sh runs MRI-NUFFT's own suite)."""
import numpy as np
import pytest

import fhdrecon  # noqa: F401  (registers the backend)

mrinufft = pytest.importorskip("mrinufft")

RNG = np.random.default_rng(3)


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("shape", [(24, 20), (12, 14, 10)], ids=["2d", "3d"])
@pytest.mark.parametrize("sense", [False, True])
def test_matches_finufft_backend(shape, sense):
    pytest.importorskip("finufft")
    m, coils = 1500, 3
    samples = RNG.uniform(-0.5, 0.5, (m, len(shape))).astype(np.float32)
    smaps = None
    if sense:
        smaps = (RNG.standard_normal((coils, *shape)) + 1j * RNG.standard_normal((coils, *shape))).astype(np.complex64)
    ours = mrinufft.get_operator("fhdrecon")(samples, shape, n_coils=coils, smaps=smaps)
    ref = mrinufft.get_operator("finufft")(samples, shape, n_coils=coils, smaps=smaps)
    img_shape = shape if sense else (coils, *shape)
    img = (RNG.standard_normal(img_shape) + 1j * RNG.standard_normal(img_shape)).astype(np.complex64)
    ksp = ref.op(img)
    assert rel(ours.op(img), ksp) < 1e-5
    assert rel(ours.adj_op(ksp), ref.adj_op(ksp)) < 1e-5


def test_density_and_batches():
    pytest.importorskip("finufft")
    shape, m = (16, 16), 800
    samples = RNG.uniform(-0.5, 0.5, (m, 2)).astype(np.float32)
    dens = RNG.uniform(0.5, 1.5, m).astype(np.float32)
    kw = dict(n_coils=2, n_batchs=2, n_trans=2, density=dens)
    ours = mrinufft.get_operator("fhdrecon")(samples, shape, **kw)
    ref = mrinufft.get_operator("finufft")(samples, shape, **kw)
    ksp = (RNG.standard_normal((2, 2, m)) + 1j * RNG.standard_normal((2, 2, m))).astype(np.complex64)
    assert rel(ours.adj_op(ksp), ref.adj_op(ksp)) < 1e-5


def test_pipe_density_follows_the_sampling_density():
    """Pipe-Menon weights on variable-density points: the density-compensated
    adjoint approaches the image as the fixed point iterates, at least as well
    as MRI-NUFFT's finufft backend does. Its Dirichlet kernel, with negative
    lobes, spread the weights over 9 decades and grew the error with the
    iterations (0.36 -> 0.43 NRMSE from 5 to 20)."""
    pytest.importorskip("finufft")
    rng = np.random.default_rng(3)
    n = 48
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    img = ((xx ** 2 / 0.7 + yy ** 2 / 0.9) < 0.8).astype(np.complex64)
    samples = np.clip(rng.normal(0, 0.18, (8000, 2)), -0.5, 0.49).astype(np.float32)
    ksp = mrinufft.get_operator("finufft")(samples, (n, n)).op(img)

    def error(backend, iters):
        op = mrinufft.get_operator(backend)(samples, (n, n), density={"name": "pipe", "max_iter": iters})
        x = op.adj_op(ksp).ravel()
        scale = np.vdot(x, img.ravel()) / np.vdot(x, x)
        return rel(scale * x, img.ravel()), np.asarray(op.density)

    e5, _ = error("fhdrecon", 5)
    e20, w = error("fhdrecon", 20)
    peer, _ = error("finufft", 20)
    assert e20 <= e5
    assert np.abs(w).max() / np.abs(w).min() < 1e3
    assert e20 <= peer


@pytest.mark.parametrize("sense", [False, True])
def test_gpu_operator_matches_the_cpu_one(lib, sense):
    """On a GPU (CuPy or PyTorch arrays in and out) the backend gives its CPU
    results (which the tests above hold to finufft's)."""
    if lib.name == "numpy":
        pytest.skip("the GPU case")
    shape, m, coils = (20, 16, 12), 2000, 2
    samples = RNG.uniform(-0.5, 0.5, (m, 3)).astype(np.float32)
    smaps = (RNG.standard_normal((coils, *shape)) + 1j * RNG.standard_normal((coils, *shape))).astype(np.complex64)
    kw = dict(n_coils=coils, smaps=smaps if sense else None)
    cpu = mrinufft.get_operator("fhdrecon")(samples, shape, **kw)
    gpu = mrinufft.get_operator("fhdrecon")(lib.put(samples), shape, device="gpu", **kw)
    img_shape = shape if sense else (coils, *shape)
    img = (RNG.standard_normal(img_shape) + 1j * RNG.standard_normal(img_shape)).astype(np.complex64)
    ksp = gpu.op(lib.put(img))
    assert type(ksp).__module__.split(".")[0] == type(lib.put(img)).__module__.split(".")[0]
    assert rel(lib.get(ksp), cpu.op(img)) < 1e-5
    assert rel(lib.get(gpu.adj_op(ksp)), cpu.adj_op(lib.get(ksp))) < 1e-5
