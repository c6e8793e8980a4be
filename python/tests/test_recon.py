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
    ("iters", 2.5, r"iters = 2.5: must be a whole number"),
    ("iters", "5", r"iters = '5': must be a whole number"),
    ("calibration", 8.9, r"calibration = 8.9: must be a whole number"),
    ("gridding", "no", r"gridding = 'no': must be True or False"),
    ("prewhiten", "no", r"prewhiten = 'no': must be True or False"),
    ("virtual_coils", -1, r"virtual_coils = -1: must be in 0..coils \(1\)"),
    ("virtual_coils", 2, r"virtual_coils = 2: must be in 0..coils \(1\)"),
    ("maps", None, r"maps = None: expected 'lowres', 'espirit' or an array"),
    ("maps", np.complex64(1), r"maps = .*: expected 'lowres', 'espirit' or an array"),
    ("maps", np.ones(256, np.complex64), r"maps = shape \(256,\): expected"),
])
def test_options_of_the_wrong_type_are_named(option, value, message):
    """Not a bare "std::bad_cast" or "stoi"; and device='tpu' is not a GPU.
    iters=2.5 ran 2 iterations, gridding='no' read as True, virtual_coils
    beyond 0..coils was ignored, maps=None an IndexError."""
    with pytest.raises(ValueError, match=message):
        fhdrecon.reconstruct(small_scan(), **{"iters": 3, "gridding": False, option: value})


@pytest.mark.parametrize("bad, message", [
    (np.nan, r"maps\[0\]\[53\] = \(nan, 0\): not a finite number"),
    (np.inf, r"maps\[0\]\[53\] = \(inf, 0\): not a finite number"),
    (1e30, r"maps\[0\]\[53\] = .*: magnitude exceeds 1000, the most a coil map may have"),
], ids=["nan", "inf", "1e30"])
def test_given_maps_that_are_not_finite_or_huge_are_refused(bad, message):
    """They gave an image of zeros after 0 CG iterations."""
    maps = np.ones((1, 1, 16, 16), np.complex64)
    images, report = fhdrecon.reconstruct(small_scan(), maps=maps, iters=3, gridding=False)
    assert report["cg"]["iterations"] == 3 and np.max(np.abs(images["iterative"])) > 0
    maps[0, 0, 3, 5] = bad
    with pytest.raises(ValueError, match=message):
        fhdrecon.reconstruct(small_scan(), maps=maps, iters=3, gridding=False)


def test_a_matrix_that_is_not_whole_is_refused():
    """(16.5, 16, 1) was read as (16, 16, 1)."""
    with pytest.raises(ValueError, match=r"matrix\[0\] = 16.5: must be a whole number"):
        fhdrecon.reconstruct(small_scan(matrix=(16.5, 16, 1)), iters=3)
    with pytest.raises(ValueError, match=r"matrix = None: needs \(nx, ny, nz\)"):
        fhdrecon.reconstruct(small_scan(matrix=None), iters=3)
