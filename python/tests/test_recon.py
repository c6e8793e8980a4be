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
