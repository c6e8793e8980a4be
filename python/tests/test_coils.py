"""Coil processing from Python: prewhitening whitens, compression keeps the
energy it says, maps have unit root sum of squares on their support."""
import numpy as np
import pytest

import fhdrecon

RNG = np.random.default_rng(11)


def correlated_scan(coils=4, m=2000, mn=4000):
    mix = RNG.standard_normal((coils, coils)) + 1j * RNG.standard_normal((coils, coils))
    noise = mix @ (RNG.standard_normal((coils, mn)) + 1j * RNG.standard_normal((coils, mn)))
    ksp = mix @ (RNG.standard_normal((coils, m)) + 1j * RNG.standard_normal((coils, m)))
    traj = RNG.uniform(-4, 4, (m, 3)).astype(np.float32)
    return fhdrecon.Scan(kspace=ksp.astype(np.complex64), traj=traj, matrix=(8, 8, 8),
                         noise=noise.astype(np.complex64))


def test_prewhitening_makes_the_noise_white():
    s = correlated_scan()
    psi = fhdrecon.noise_covariance(s.noise)
    white, w = fhdrecon.prewhiten(s)
    after = fhdrecon.noise_covariance(white.noise)
    scale = np.mean(np.real(np.diag(psi)))
    np.testing.assert_allclose(after, scale * np.eye(4), atol=1e-3 * scale)
    np.testing.assert_allclose(w @ psi @ w.conj().T, scale * np.eye(4), atol=1e-6 * scale)
    np.testing.assert_allclose(white.kspace, (w @ s.kspace).astype(np.complex64), rtol=1e-4, atol=1e-4)


def test_compression_keeps_what_it_reports():
    s = correlated_scan()
    small, m, energy = fhdrecon.compress_coils(s, 2)
    assert small.kspace.shape == (2, s.samples) and m.shape == (2, 4)
    kept = np.sum(np.abs(small.kspace.astype(np.complex128)) ** 2)
    total = np.sum(np.abs(s.kspace.astype(np.complex128)) ** 2)
    assert kept / total == pytest.approx(np.sum(energy[:2]) / np.sum(energy), rel=1e-4)
    np.testing.assert_allclose(m @ m.conj().T, np.eye(2), atol=1e-10)
    # k = every coil: the coils unchanged, the same energies (they were all 1).
    same, eye, all_energy = fhdrecon.compress_coils(s, 4)
    np.testing.assert_array_equal(same.kspace, s.kspace)
    np.testing.assert_array_equal(eye, np.eye(4))
    np.testing.assert_allclose(all_energy, energy, rtol=1e-12)
    sv = np.linalg.svd(s.kspace.astype(np.complex128), compute_uv=False) ** 2
    np.testing.assert_allclose(all_energy, sv, rtol=1e-6)


def test_no_noise_no_prewhitening():
    s = correlated_scan()
    s.noise = None
    same, w = fhdrecon.prewhiten(s)
    assert w is None and same is s


@pytest.fixture(scope="module")
def phantom_coils(tmp_path_factory):
    import os
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.environ.get("FHDRECON_EXE", os.path.join(root, "build", "fhdrecon"))
    if not os.access(exe, os.X_OK):
        pytest.skip(f"no fhdrecon CLI at {exe}")
    path = str(tmp_path_factory.mktemp("maps") / "c.h5")
    subprocess.run([exe, "-q", "synth", "--matrix", "20", "--readout", "40", "--spokes", "900", "--coils", "4",
                    "-o", path], check=True)
    return fhdrecon.read_scan(path)


@pytest.mark.parametrize("which", ["lowres", "espirit"])
def test_maps_have_unit_rss_on_their_support(phantom_coils, which):
    fn = fhdrecon.lowres_maps if which == "lowres" else fhdrecon.espirit_maps
    maps = fn(phantom_coils, calibration=12)
    assert maps.shape == (4, 20, 20, 20) and maps.dtype == np.complex64
    rss = np.sqrt(np.sum(np.abs(maps) ** 2, axis=0))
    support = rss > 0
    assert 0.05 < support.mean() < 1.0
    np.testing.assert_allclose(rss[support], 1.0, atol=0.05 if which == "espirit" else 1e-4)


@pytest.mark.parametrize("call, message", [
    (lambda s: fhdrecon.lowres_maps(s, crop=float("nan")), r"crop = nan: must be a finite number in \[0, 0.9\]"),
    (lambda s: fhdrecon.lowres_maps(s, calibration=10**6), r"calibration = 1000000: must be in 4..256"),
    (lambda s: fhdrecon.espirit_maps(s, crop=5), r"crop = 5: must be a finite number in \[0, 1\]"),
    (lambda s: fhdrecon.espirit_maps(s, threshold=float("nan")), r"threshold = nan"),
    (lambda s: fhdrecon.compress_coils(s, 99), r"k = 99: must be in 1..coils \(4\)"),
    (lambda s: fhdrecon.compress_coils(s, 0), r"compress_coils: k = 0: must be in 1..coils \(4\)"),
    (lambda s: fhdrecon.compress_coils(s, 2.7), r"k = 2.7: must be a whole number"),
    (lambda s: fhdrecon.lowres_maps(s, calibration=8.9), r"calibration = 8.9: must be a whole number"),
    # operator.index(True) is 1: k=True compressed to one coil
    (lambda s: fhdrecon.compress_coils(s, True), r"k = True: must be a whole number, not a bool"),
    (lambda s: fhdrecon.whitening_matrix(np.eye(2), keep_scale="no"), r"keep_scale = 'no': must be True or False"),
    # beyond int32: "incompatible function arguments" from nanobind before
    (lambda s: fhdrecon.compress_coils(s, 2**40), r"k = 1099511627776: must be in 1..4"),
    (lambda s: fhdrecon.lowres_maps(s, calibration=2**40), r"calibration = 1099511627776: must be in 4..256"),
    (lambda s: fhdrecon.espirit_maps(s, calibration=2**40), r"calibration = 1099511627776: must be in 4..256"),
    (lambda s: fhdrecon.espirit_maps(s, kernel=2**40), r"kernel = 1099511627776: must be in 2..256"),
    # the core's message said "ESPIRiT needs a matrix of at least -1 and a calibration of at least 0"
    (lambda s: fhdrecon.espirit_maps(s, kernel=0), r"^kernel = 0: must be in 2..256$"),
    (lambda s: fhdrecon.noise_covariance(np.ones(5)), r"noise = shape \(5,\): needs \(C, M\) noise samples"),
    (lambda s: fhdrecon.whitening_matrix(np.ones(3)), r"psi = shape \(3,\): must be a square \(C, C\)"),
    # a NaN matrix before, named only later by whitening_matrix
    (lambda s: fhdrecon.noise_covariance(np.where(np.arange(8) == 3, np.nan, 1).reshape(2, 4)),
     r"noise_covariance: noise\[0\]\[3\] = \(nan, 0\): not a finite number"),
], ids=["lowres-crop", "lowres-calibration", "espirit-crop", "espirit-threshold", "compress-k", "compress-k-0",
        "compress-k-fraction", "lowres-calibration-fraction", "compress-k-bool", "keep-scale-string", "compress-k-2**40",
        "lowres-calibration-2**40", "espirit-calibration-2**40", "espirit-kernel-2**40", "espirit-kernel-0",
        "noise-covariance-1d", "whitening-1d", "noise-covariance-nan"])
def test_coil_helpers_check_their_arguments(call, message):
    """As reconstruct() checks its options: maps of zeros for crop=nan, crop=5
    accepted and k=99 ignored before; k=0 named the CLI's --virtual-coils, 2.7
    and 8.9 were truncated, keep_scale='no' read as True."""
    with pytest.raises(ValueError, match=message):
        call(correlated_scan())


def test_whitening_matrix_refuses_a_covariance_that_is_not_hermitian_positive_definite():
    psi = np.array([[2, 0.5 - 0.25j], [0.5 + 0.25j, 1]])
    assert fhdrecon.whitening_matrix(psi).shape == (2, 2)
    symmetric = np.array([[2, 0.5 + 0.25j], [0.5 + 0.25j, 1]])  # n n^T: the conjugate forgotten
    with pytest.raises(ValueError, match=r"covariance\[1\]\[0\] = \(0.5, 0.25\): not Hermitian"):
        fhdrecon.whitening_matrix(symmetric)
    with pytest.raises(ValueError, match="not positive definite"):
        fhdrecon.whitening_matrix(-psi)
    with pytest.raises(ValueError, match="must be a square"):
        fhdrecon.whitening_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="not a finite number"):
        fhdrecon.whitening_matrix(np.array([[1, np.nan], [np.nan, 1]]))


@pytest.mark.parametrize("helper", [fhdrecon.prewhiten, fhdrecon.lowres_maps, fhdrecon.espirit_maps])
def test_coil_helpers_want_a_scan(helper):
    """A path gave "AttributeError: 'str' object has no attribute '_to_dict'"."""
    with pytest.raises(TypeError, match=r"scan = 'c2d.h5': must be a fhdrecon.Scan \(read_scan reads a file"):
        helper("c2d.h5")
