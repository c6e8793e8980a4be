"""A round trip of each file format through read_scan / write_scan, the
BART scaling, and refusals that name the file and field."""
import numpy as np
import pytest

import fhdrecon

RNG = np.random.default_rng(5)


def make_scan(coils=3, noise=True, matrix=(16, 16, 8), spokes=12, readout=20):
    m = spokes * readout
    traj = RNG.uniform(-3.5, 3.5, (m, 3)).astype(np.float32)
    ksp = (RNG.standard_normal((coils, m)) + 1j * RNG.standard_normal((coils, m))).astype(np.complex64)
    nz = (RNG.standard_normal((coils, 64)) + 1j * RNG.standard_normal((coils, 64))).astype(np.complex64)
    return fhdrecon.Scan(kspace=ksp, traj=traj, matrix=matrix, noise=nz if noise else None,
                         provenance={"tool": "test_io"})


def test_hdf5_round_trip(tmp_path):
    s = make_scan()
    s.dcf = RNG.uniform(0.1, 1, s.samples).astype(np.float32)
    p = str(tmp_path / "scan.h5")
    fhdrecon.write_scan(p, s)
    back = fhdrecon.read_scan(p)
    np.testing.assert_array_equal(back.kspace, s.kspace)
    np.testing.assert_array_equal(back.traj, s.traj)
    np.testing.assert_array_equal(back.noise, s.noise)
    np.testing.assert_array_equal(back.dcf, s.dcf)
    assert back.matrix == s.matrix and back.provenance["tool"] == "test_io"


def test_hdf5_single_coil_field_map(tmp_path):
    s = make_scan(coils=1, noise=False)
    s.field_map = RNG.uniform(-50, 50, (8, 16, 16)).astype(np.float32)
    s.sample_times = np.linspace(0, 0.01, s.samples).astype(np.float32)
    p = str(tmp_path / "one.h5")
    fhdrecon.write_scan(p, s)
    back = fhdrecon.read_scan(p)
    np.testing.assert_array_equal(back.field_map, s.field_map)
    np.testing.assert_array_equal(back.sample_times, s.sample_times)


def test_ismrmrd_round_trip(tmp_path):
    if not fhdrecon._core.has_ismrmrd():
        pytest.skip("built without ISMRMRD")
    s = make_scan()
    p = str(tmp_path / "scan.mrd")
    fhdrecon.write_scan(p, s, readout=20)
    back = fhdrecon.read_scan(p)
    np.testing.assert_array_equal(back.kspace, s.kspace)
    np.testing.assert_allclose(back.traj, s.traj)
    np.testing.assert_array_equal(back.noise, s.noise)
    assert back.matrix == s.matrix and back.geometry is not None


def test_bart_round_trip_and_scaling(tmp_path):
    s = make_scan(noise=False)
    base = str(tmp_path / "ksp")
    fhdrecon.write_scan(base, s, readout=20)
    # BART's k-space is unitary: ours divided by sqrt(nx ny nz) (docs/formats.md).
    raw = fhdrecon.read_cfl(base)
    assert raw.shape == (1, 20, 12, 3)
    np.testing.assert_allclose(raw[0].reshape(-1, 3, order="F").T, s.kspace / np.sqrt(16 * 16 * 8), rtol=1e-6)
    back = fhdrecon.read_scan(base + ".cfl", traj=base + "_traj.cfl", matrix=(16, 16, 8))
    np.testing.assert_allclose(back.kspace, s.kspace, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(back.traj, s.traj)


def test_bart_grid_from_trajectory(tmp_path):
    s = make_scan(coils=1, noise=False)
    base = str(tmp_path / "k")
    fhdrecon.write_scan(base, s)
    back = fhdrecon.read_scan(base, traj=base + "_traj")
    assert back.matrix == (8, 8, 8)  # |k| < 3.5: the smallest even band holding it


def test_bart_2d_with_float_noise_in_kz_stays_2d(tmp_path):
    """A 2D trajectory whose kz holds float noise (within the band of a
    one-voxel axis) is 2D, as in the CLI; it was read as 2 slices."""
    s = make_scan(coils=1, noise=False, matrix=(16, 16, 1))
    s.traj[:, 2] = 0
    base = str(tmp_path / "k2")
    fhdrecon.write_scan(base, s)
    t = fhdrecon.read_cfl(base + "_traj")
    t[2] = 1e-6  # kz: the first axis of BART's trajectory is (kx, ky, kz)
    t.reshape(3, -1)[2, 0] = -3e-7
    fhdrecon.write_cfl(base + "_traj", t)
    assert fhdrecon.read_scan(base, traj=base + "_traj").matrix == (8, 8, 1)
    assert fhdrecon.read_scan(base, traj=base + "_traj", matrix=16).matrix == (16, 16, 1)
    with pytest.raises(ValueError, match="matrix = 0: must be at least 1"):
        fhdrecon.read_scan(base, traj=base + "_traj", matrix=0)


def test_ismrmrd_units_are_checked(tmp_path):
    s = make_scan(coils=1, noise=False)
    p = str(tmp_path / "scan.mrd")
    fhdrecon.write_scan(p, s, format="ismrmrd", readout=20)
    # The file states cycles/FOV (fhdrecon's writer): the same with the word, refused against it.
    np.testing.assert_array_equal(fhdrecon.read_scan(p, traj_units="cycles").traj, fhdrecon.read_scan(p).traj)
    with pytest.raises(ValueError, match="--traj-units"):
        fhdrecon.read_scan(p, traj_units="normalized")
    with pytest.raises(ValueError, match="traj_units = 'radians'"):
        fhdrecon.read_scan(p, traj_units="radians")
    with pytest.raises(ValueError, match="choose one"):
        fhdrecon.read_scan(p, normalized_traj=True, traj_units="cycles")


def test_cfl_array_round_trip(tmp_path):
    a = (RNG.standard_normal((4, 3, 2)) + 1j * RNG.standard_normal((4, 3, 2))).astype(np.complex64)
    fhdrecon.write_cfl(str(tmp_path / "a"), a)
    np.testing.assert_array_equal(fhdrecon.read_cfl(str(tmp_path / "a.cfl")), a)


def test_bad_files_name_file_and_field(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        fhdrecon.read_scan(str(tmp_path / "missing.h5"))
    s = make_scan(coils=1, noise=False)
    s.traj[5, 1] = np.nan
    p = str(tmp_path / "nan.h5")
    with pytest.raises(ValueError):
        fhdrecon.write_scan(p, s)
        fhdrecon.read_scan(p)
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    with pytest.raises(ValueError, match="bad.h5"):
        fhdrecon.read_scan(str(bad))


@pytest.mark.parametrize("fmt", ["scan.h5", "ksp"])
def test_paths_may_be_pathlib(tmp_path, fmt):
    """pathlib.Path (any os.PathLike) was refused: "incompatible function arguments"."""
    s = make_scan(coils=1, noise=False)
    p = tmp_path / fmt
    fhdrecon.write_scan(p, s, readout=20)
    traj = tmp_path / "ksp_traj" if fmt == "ksp" else None
    back = fhdrecon.read_scan(p, traj=traj, matrix=(16, 16, 8) if traj else None)
    np.testing.assert_allclose(back.kspace, s.kspace, rtol=1e-5, atol=1e-6)
    a = np.arange(6, dtype=np.complex64).reshape(2, 3)
    fhdrecon.write_cfl(tmp_path / "a", a)
    np.testing.assert_array_equal(fhdrecon.read_cfl(tmp_path / "a"), a)
    with pytest.raises(TypeError, match=r"path = None: must be a str, bytes or os.PathLike"):
        fhdrecon.read_scan(None)


def test_geometry_missing_a_field_is_named(tmp_path):
    """A KeyError 'position' before."""
    s = make_scan(coils=1, noise=False)
    s.geometry = dict(fov_mm=(200, 200, 5), read_dir=(1, 0, 0), phase_dir=(0, 1, 0), slice_dir=(0, 0, 1))
    with pytest.raises(ValueError, match=r"geometry\['position'\] = missing: geometry needs fov_mm, position"):
        fhdrecon.write_scan(tmp_path / "g.h5", s)
    s.geometry["position"] = (0, 0)
    with pytest.raises(ValueError, match=r"geometry\['position'\] = 2 values: must hold 3"):
        fhdrecon.write_scan(tmp_path / "g.h5", s)
    s.geometry = "axial"
    with pytest.raises(ValueError, match=r"geometry = str: must be a dict"):
        fhdrecon.write_scan(tmp_path / "g.h5", s)
