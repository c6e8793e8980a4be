"""fhdrecon.reconstruct gives the CLI's image on the same file (the same
pipeline and defaults), and the report says what ran."""
import os
import subprocess

import numpy as np
import pytest

import fhdrecon


@pytest.fixture(scope="module")
def coil_scan(tmp_path_factory, request):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.environ.get("FHDRECON_EXE", os.path.join(root, "build", "fhdrecon"))
    if not os.access(exe, os.X_OK):
        pytest.skip(f"no fhdrecon CLI at {exe} (set FHDRECON_EXE)")
    d = tmp_path_factory.mktemp("recon")
    path = str(d / "coils.h5")
    subprocess.run([exe, "-q", "synth", "--phantom", "shepp3d", "--matrix", "16", "--readout", "32", "--spokes",
                    "500", "--coils", "4", "--noise", "0.01", "--noise-samples", "256", "-o", path], check=True)
    return exe, path, d


def cli_image(exe, path, out, extra):
    subprocess.run([exe, "-q", "--input", path, "--device", "cpu", "--no-cache", "--save", "cfl", "--out", out]
                   + extra, check=True, stdout=subprocess.DEVNULL)
    # BART's image order [Nx, Ny, Nz], x fastest: as (nz, ny, nx) in C order.
    return np.ascontiguousarray(fhdrecon.read_cfl(os.path.join(out, "iterative")).transpose(2, 1, 0))


@pytest.mark.parametrize("maps", ["lowres", "espirit"])
def test_sense_equals_the_cli(coil_scan, maps):
    exe, path, d = coil_scan
    want = cli_image(exe, path, str(d / f"cli-{maps}"), ["--iters", "8", "--maps", maps, "--no-gridding"])
    scan = fhdrecon.read_scan(path)
    images, report = fhdrecon.reconstruct(scan, device="cpu", iters=8, maps=maps, gridding=False)
    got = images["iterative"]
    assert got.shape == (16, 16, 16) and got.dtype == np.complex64
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 1e-5
    assert report["backend"].startswith("cpu") and report["cg"]["iterations"] == 8
    assert "coil maps" in [s["name"] for s in report["stages"]]


def test_rss_with_gridding_and_report(coil_scan):
    exe, path, d = coil_scan
    scan = fhdrecon.read_scan(path)
    images, report = fhdrecon.reconstruct(scan, device="cpu", iters=5, coil_combine="rss")
    assert set(images) >= {"iterative", "gridding-trilinear", "gridding-kb"}
    assert report["methods"]["iterative"]["iterations"] == 5
    assert report["lambda_relative"] == pytest.approx(0.03)


def test_bad_option_is_refused_before_work(coil_scan):
    _, path, _ = coil_scan
    scan = fhdrecon.read_scan(path)
    with pytest.raises(ValueError, match="fhd"):
        fhdrecon.reconstruct(scan, fhd="fast")


def small_scan(**change):
    rng = np.random.default_rng(3)
    m = 400
    traj = np.zeros((m, 3), np.float32)
    traj[:, :2] = rng.uniform(-7.5, 7.5, (m, 2))
    k = (rng.standard_normal((1, m)) + 1j * rng.standard_normal((1, m))).astype(np.complex64)
    fields = dict(kspace=k, traj=traj, matrix=(16, 16, 1))
    fields.update(change)
    return fhdrecon.Scan(**fields)


def test_a_scan_from_arrays_gets_the_readers_checks():
    """No reader saw it: NaN or Inf in k or the data, a matrix beyond 65536 and
    samples outside the band are refused by name (an abort, a segfault or an
    image of zeros before)."""
    base = small_scan()
    images, _ = fhdrecon.reconstruct(base, iters=3, gridding=False)
    assert np.max(np.abs(images["iterative"])) > 0
    traj = base.traj.copy()
    traj[5, 0] = np.inf
    with pytest.raises(ValueError, match=r"traj\[5\]\.kx = inf: not a finite number"):
        fhdrecon.reconstruct(small_scan(traj=traj), iters=3, fhd="nufft", gridding=False)
    traj[5, 0] = 100
    with pytest.raises(ValueError, match=r"traj\[5\]\.kx = 100: outside the band"):
        fhdrecon.reconstruct(small_scan(traj=traj), iters=3, gridding=False)
    k = base.kspace.copy()
    k[0, 9] = np.nan
    with pytest.raises(ValueError, match=r"kspace\[0\]\[9\] = \(nan, "):
        fhdrecon.reconstruct(small_scan(kspace=k), iters=3, gridding=False)
    with pytest.raises(ValueError, match=r"matrix\[0\] = 100000: matrix size must be in 1..65536"):
        fhdrecon.lowres_maps(small_scan(matrix=(100000, 100000, 1)))
    with pytest.raises(ValueError, match=r"kspace = shape \(1, 20, 20\): needs \[C, M\]"):
        fhdrecon.reconstruct(small_scan(kspace=np.zeros((1, 20, 20), np.complex64)))


@pytest.mark.parametrize("option, value, message", [
    ("iters", 2**40, r"iters = 1099511627776: must be an int"),
    ("lam", "foo", r"lam = 'foo': must be a number"),
    ("device", "tpu", r"device = tpu: must be auto, cpu, gpu or gpu:N"),
    ("device", "gpu:x", r"device = gpu:x: must be auto, cpu, gpu or gpu:N"),
    ("device", 0, r"device = 0: must be a string"),
])
def test_options_of_the_wrong_type_are_named(option, value, message):
    """Not a bare "std::bad_cast" or "stoi"; and device='tpu' is not a GPU."""
    with pytest.raises(ValueError, match=message):
        fhdrecon.reconstruct(small_scan(), **{"iters": 3, "gridding": False, option: value})
