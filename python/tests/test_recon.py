"""fhdrecon.reconstruct gives the CLI's image on the same file (the same
pipeline and defaults), and the report says what ran."""
import os
import subprocess
import warnings

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


def exact_coil_scan(nx=16, ny=16, coils=4, m=1500):
    """Data computed in float64 from known maps S (RSS 1) and image x by
    docs/conventions.md's model D_m = sum_n S_c,n x_n exp(-i 2 pi k_m.x_n),
    without noise in the data, plus correlated noise-only samples."""
    rng = np.random.default_rng(3)
    kx, ky = rng.uniform(-nx / 2, nx / 2, m), rng.uniform(-ny / 2, ny / 2, m)
    traj = np.stack([kx, ky, np.zeros(m)], 1).astype(np.float32)
    y_, x_ = np.meshgrid((np.arange(ny) - ny / 2) / ny, (np.arange(nx) - nx / 2) / nx, indexing="ij")
    x = np.exp(-((x_ - 0.05) ** 2 + (y_ + 0.1) ** 2) / 0.05) * (1 + 0.5j * x_)
    centres = [(-.4, -.4), (.4, -.4), (-.4, .4), (.4, .4)][:coils]
    s = np.stack([np.exp(-((x_ - a) ** 2 + (y_ - b) ** 2) / 0.15) * np.exp(1j * (3 * a * x_ + 2 * b * y_))
                  for a, b in centres])
    s /= np.sqrt((np.abs(s) ** 2).sum(0, keepdims=True))
    e = np.exp(-2j * np.pi * (np.outer(kx, x_.ravel()) + np.outer(ky, y_.ravel())))
    k = np.stack([e @ (s[c] * x).ravel() for c in range(coils)])
    a = np.eye(coils) + 0.6 * (rng.standard_normal((coils, coils)) + 1j * rng.standard_normal((coils, coils)))
    noise = 0.01 * a @ (rng.standard_normal((coils, 4000)) + 1j * rng.standard_normal((coils, 4000)))
    scan = fhdrecon.Scan(kspace=k.astype(np.complex64), traj=traj, matrix=(nx, ny, 1),
                         noise=noise.astype(np.complex64))
    return scan, s[:, None].astype(np.complex64), x


def relative_error(image, x):
    return float(np.linalg.norm(image.ravel() - x.ravel()) / np.linalg.norm(x))


@pytest.mark.parametrize("virtual_coils", [0, 3], ids=["prewhitened", "prewhitened-and-compressed"])
def test_given_maps_are_mixed_as_the_coils_are(virtual_coils):
    """Given maps are the scan's coils' sensitivities: prewhitening (the
    default) and compression mix the coils, and the maps must be mixed alike
    (as the CLI's --maps true). Unmixed, exact data gave an image 52 % off;
    virtual_coils was refused ("must number the coils, 3")."""
    scan, maps, x = exact_coil_scan()
    run = dict(device="cpu", maps=maps, lam=0.0, maps_crop=0.0, iters=150, tol=1e-7, gridding=False)
    plain = fhdrecon.reconstruct(scan, prewhiten=False, **run)[0]["iterative"][0]
    assert relative_error(plain, x) < 1e-4
    images, report = fhdrecon.reconstruct(scan, virtual_coils=virtual_coils, **run)
    assert relative_error(images["iterative"][0], x) < 1e-4


def test_given_maps_of_another_shape_or_all_zero_are_refused():
    """Only the size was checked: (C, 1, nx, ny) on a 24x16 grid gave an image
    59 % off; all-zero maps an image of zeros after 0 CG iterations."""
    scan, maps, x = exact_coil_scan(nx=24, ny=16, m=800)
    run = dict(device="cpu", lam=0.0, maps_crop=0.0, iters=60, gridding=False, prewhiten=False)
    flat = fhdrecon.reconstruct(scan, maps=maps[:, 0], **run)[0]["iterative"]  # (C, ny, nx) in 2D
    assert relative_error(flat, x) < 1e-3
    with pytest.raises(ValueError, match=r"maps = shape \(4, 1, 24, 16\): expected \(C, nz, ny, nx\) = "
                                         r"\(C, 1, 16, 24\) for the scan's matrix \(24, 16, 1\)"):
        fhdrecon.reconstruct(scan, maps=maps.reshape(4, 1, 24, 16), **run)
    with pytest.raises(ValueError, match=r"maps = shape \(4, 384\): expected"):
        fhdrecon.reconstruct(scan, maps=maps.reshape(4, 384), **run)
    with pytest.raises(ValueError, match=r"coil maps: values = all zero: coil maps need a sensitivity"):
        fhdrecon.reconstruct(scan, maps=np.zeros_like(maps), **run)


@pytest.mark.parametrize("option, value, message", [
    ("lam", True, r"lam = True: must be a number, not a bool"),
    ("lam", np.True_, r"lam = (np.)?True_?: must be a number, not a bool"),
    ("tol", False, r"tol = False: must be a number, not a bool"),
    ("maps_crop", np.False_, r"maps_crop = (np.)?False_?: must be a number, not a bool"),
    ("iters", True, r"iters = True: must be a whole number, not a bool"),
    ("admm_inner", 0, r"admm_inner = 0: must be in 1..1000"),
    ("nufft_tol", 1e-9, r"nufft_tol = 1e-09: must be a finite number in \[1e-07, 0.1\]"),
])
def test_bools_as_numbers_and_the_clis_bounds_are_refused(option, value, message):
    """lam=True ran with lambda 1 and iters=True one iteration; nufft_tol=1e-9
    passed with fhd='exact', where the CLI refuses --nufft-tol 1e-9 always."""
    with pytest.raises(ValueError, match=message):
        fhdrecon.reconstruct(small_scan(), **{"iters": 3, "gridding": False, option: value})


def test_a_scan_that_is_not_a_scan_is_a_type_error():
    """reconstruct('c2d.h5') was an AttributeError about _to_dict."""
    with pytest.raises(TypeError, match=r"scan = 'c2d.h5': must be a fhdrecon.Scan"):
        fhdrecon.reconstruct("c2d.h5")


def test_admm_options_reach_the_solver():
    """admm_rho and admm_inner (the CLI's --admm-rho, --admm-inner) were a TypeError."""
    run = dict(device="cpu", iters=3, gridding=False, reg="tv")
    a = fhdrecon.reconstruct(small_scan(), **run)[0]["iterative"]
    b = fhdrecon.reconstruct(small_scan(), admm_inner=2, admm_rho=0.05, **run)[0]["iterative"]
    assert np.max(np.abs(a - b)) > 1e-3 * np.max(np.abs(a))


@pytest.mark.parametrize("scan_coils, options, message", [
    (4, dict(coil_combine="rss", maps="espirit", calibration=16),
     r"^maps and calibration: ignored \(for SENSE's maps; coil combination rss uses none\)$"),
    (1, dict(maps=np.ones((1, 1, 16, 16), np.complex64)), r"^maps: ignored \(for several coils; this scan has one\)$"),
    (1, dict(nufft_tol=1e-3), r"^nufft_tol: ignored \(for the NUFFT; the exact gather has no tolerance\)$"),
    (1, dict(admm_rho=1.0), r"^admm_rho: ignored \(for ADMM, reg tv or wavelet; l2 runs CG\)$"),
    (1, dict(fhd="nufft", trig="double"), r"^trig: ignored \(for the exact gather; the NUFFT has its own\)$"),
])
def test_ignored_options_are_warned_as_the_cli_does(scan_coils, options, message):
    """They ran silently where the CLI warns (the library's ignored_options, recon/problem/options.hpp)."""
    scan = small_scan() if scan_coils == 1 else exact_coil_scan(m=400)[0]
    with pytest.warns(UserWarning, match=message) as seen:
        fhdrecon.reconstruct(scan, device="cpu", iters=2, gridding=False, **options)
    assert len(seen) == 1


def test_default_options_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fhdrecon.reconstruct(small_scan(), device="cpu", iters=2, gridding=False, maps="lowres")
        fhdrecon.reconstruct(exact_coil_scan(m=400)[0], device="cpu", iters=2, gridding=False)


def test_default_cache_dir_shares_the_clis_cache(coil_scan, tmp_path, monkeypatch):
    """default_cache_dir() was the CLI's q/ directory, which cache_dir takes
    as --cache-dir: Q went to .../fhdrecon/q/q, a second copy."""
    exe, path, _ = coil_scan
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fhdrecon.default_cache_dir() == str(tmp_path / "fhdrecon")
    subprocess.run([exe, "-q", "--input", path, "--device", "cpu", "--iters", "2", "--save", "none", "--out",
                    str(tmp_path / "out")], check=True, stdout=subprocess.DEVNULL)
    _, report = fhdrecon.reconstruct(fhdrecon.read_scan(path), device="cpu", iters=2,
                                     cache_dir=fhdrecon.default_cache_dir())
    assert report["q_cached"] is True
