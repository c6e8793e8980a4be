"""A round trip of each file format through read_scan / write_scan, the
BART scaling, and refusals that name the file and field."""
import dataclasses
import warnings

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


def scan_with_field(readout=20):
    """One coil on an 8x8 grid, readouts of `readout` samples 10 us apart from
    TE = 2 ms (the form ISMRMRD holds), a field map of finite Hz."""
    s = make_scan(coils=1, noise=False, matrix=(8, 8, 1))
    s.traj[:, 2] = 0
    s.field_map = RNG.uniform(-50, 50, (1, 8, 8)).astype(np.float32)
    s.sample_times = (0.002 + 1e-5 * (np.arange(s.samples) % readout)).astype(np.float32)
    return s


WRITERS = ["bad.h5", "bad.mrd"]


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("change, message", [
    # 1 time for 240 samples: the writers read 240 floats from it (heap garbage in the file)
    (dict(sample_times=np.zeros(1, np.float32)), r"scan: sample_times length = 1: must equal the number of trajectory samples 240"),
    (dict(field_map=None, sample_times=np.zeros(1, np.float32)), r"sample_times length = 1"),
    (dict(field_map=None, sample_times=np.where(np.arange(240) == 3, np.nan, 0).astype(np.float32)),
     r"scan: sample time\[3\] = nan: must be seconds in \[0, 10\]"),
    (dict(field_map=np.zeros((1, 8, 7), np.float32)), r"scan: field_map length = 56: must equal the grid's 64 voxels"),
    (dict(field_map=np.full((1, 8, 8), np.nan, np.float32)), r"scan: field map\[0\] = nan: must be finite Hz"),
    (dict(sample_times=None), r"scan: sample_times = \(missing\): a field_map needs each sample's time"),
    (dict(sample_times=np.full(240, -1, np.float32)), r"scan: sample time\[0\] = -1.0+: must be seconds in \[0, 10\]"),
])
def test_writers_refuse_bad_sample_times_and_field_maps(tmp_path, name, change, message):
    """Written before (exit normally) into files the readers refuse, or with
    memory past a short sample_times in them."""
    if name.endswith(".mrd") and not fhdrecon._core.has_ismrmrd():
        pytest.skip("built without ISMRMRD")
    s = dataclasses.replace(scan_with_field(), **change)
    with pytest.raises(ValueError, match=message):
        fhdrecon.write_scan(tmp_path / name, s, readout=20)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["p.mrd", "pb"])
def test_phi_is_refused_by_formats_without_it(tmp_path, name):
    """ISMRMRD and BART dropped phi silently: the file read back was another
    scan (a 3.6x different image). HDF5 keeps it."""
    if name.endswith(".mrd") and not fhdrecon._core.has_ismrmrd():
        pytest.skip("built without ISMRMRD")
    s = make_scan(coils=2, noise=False)
    s.phi = np.exp(1j * RNG.uniform(0, 6, s.samples)).astype(np.complex64)
    kind = "ISMRMRD" if name.endswith(".mrd") else "BART"
    with pytest.raises(ValueError, match=rf"{name}: phi: {kind} has no place for Phi\(k\)"):
        fhdrecon.write_scan(tmp_path / name, s, readout=20)
    assert list(tmp_path.iterdir()) == []
    fhdrecon.write_scan(tmp_path / "p.h5", s)
    np.testing.assert_array_equal(fhdrecon.read_scan(tmp_path / "p.h5").phi, s.phi)


def test_fields_a_format_drops_are_warned_of_by_name(tmp_path):
    """dcf (both), noise (BART), field map (both) and sample times (BART) were
    dropped without a word; docs/formats.md says the ISMRMRD writer warns for
    the field map, as the CLI does."""
    s = scan_with_field()
    s.dcf = RNG.uniform(0.1, 1, s.samples).astype(np.float32)
    s.noise = np.ones((1, 16), np.complex64)
    if fhdrecon._core.has_ismrmrd():
        with pytest.warns(UserWarning) as got:
            fhdrecon.write_scan(tmp_path / "w.mrd", s, readout=20)
        said = [str(w.message) for w in got]
        assert len(said) == 2 and "dcf is not written" in said[0] and "field_map is not" in said[1]
        back = fhdrecon.read_scan(tmp_path / "w.mrd")
        assert back.field_map is None and back.dcf is None and back.noise is not None
    with pytest.warns(UserWarning) as got:
        fhdrecon.write_scan(tmp_path / "wb", s, readout=20)
    said = [str(w.message) for w in got]
    assert len(said) == 3
    assert "dcf is not written" in said[0] and "noise samples are not written" in said[1]
    assert "field_map and sample_times are not written" in said[2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # HDF5 keeps every field: no warning
        fhdrecon.write_scan(tmp_path / "w.h5", s)


@pytest.mark.parametrize("matrix", [(32,), (32, 32), (8, 8, 1, 1)])
def test_bart_matrix_is_an_int_or_a_triple(tmp_path, matrix):
    """(32,) became 32^3 for a 2D trajectory; (32, 32) a NumPy broadcast error."""
    s = make_scan(coils=1, noise=False, matrix=(16, 16, 1))
    s.traj[:, 2] = 0
    fhdrecon.write_scan(tmp_path / "k", s, readout=20)
    with pytest.raises(ValueError, match=r"matrix = .*: needs an int or \(nx, ny, nz\)"):
        fhdrecon.read_scan(tmp_path / "k", traj=tmp_path / "k_traj", matrix=matrix)


def test_whole_numbers_beyond_int32_are_named(tmp_path):
    """They reached the compiled module as "std::bad_cast" or "incompatible
    function arguments"."""
    s = make_scan(coils=1, noise=False, matrix=(16, 16, 1))
    s.traj[:, 2] = 0
    with pytest.raises(ValueError, match=r"matrix\[0\] = 2147483648: matrix size must be in 1..65536"):
        fhdrecon.write_scan(tmp_path / "m.h5", dataclasses.replace(s, matrix=(2**31, 16, 1)))
    with pytest.raises(ValueError, match=r"readout = 1099511627776: must lie in 0..2147483647"):
        fhdrecon.write_scan(tmp_path / "m.mrd", s, readout=2**40)
    fhdrecon.write_scan(tmp_path / "k", s, readout=20)
    with pytest.raises(ValueError, match=r"matrix = 1099511627776: matrix size must be in 1..65536"):
        fhdrecon.read_scan(tmp_path / "k", traj=tmp_path / "k_traj", matrix=2**40)


def test_scan_fields_of_the_wrong_kind_are_named(tmp_path):
    s = make_scan(coils=1, noise=False)
    assert dataclasses.replace(s, kspace=s.kspace[0]).coils == 1  # 1-D kspace: one coil (was M)
    with pytest.raises(TypeError, match=r"scan = \{.*\}: must be a fhdrecon.Scan"):
        fhdrecon.write_scan(tmp_path / "d.h5", s._to_dict())  # AttributeError before
    with pytest.raises(ValueError, match=r"provenance = \[\('a', 'b'\)\]: must be a dict of str"):
        fhdrecon.write_scan(tmp_path / "p.h5", dataclasses.replace(s, provenance=[("a", "b")]))
    t = make_scan(coils=4)
    with pytest.raises(ValueError, match=r"scan: noise = shape \(2, 64\): needs \[C, Mn\] with C = 4"):
        fhdrecon.write_scan(tmp_path / "n.h5", dataclasses.replace(t, noise=t.noise[:2]))
    with pytest.raises(ValueError, match=r"scan: matrix = \(16, 16\): needs \(nx, ny, nz\)"):
        fhdrecon._core.write_scan_h5(str(tmp_path / "d.h5"), dict(s._to_dict(), matrix=(16, 16)))
    with pytest.raises(ValueError, match=r"scan: matrix = \(2147483648, 16, 8\): needs \(nx, ny, nz\)"):
        fhdrecon._core.write_scan_h5(str(tmp_path / "d.h5"), dict(s._to_dict(), matrix=(2**31, 16, 8)))
    assert list(tmp_path.iterdir()) == []


def test_read_scan_arguments_its_format_does_not_use(tmp_path):
    """normalized_traj='no' was read as True; matrix for an HDF5 file was ignored
    silently; traj= with an ISMRMRD file read it as a BART k-space."""
    s = make_scan(coils=1, noise=False)
    p = tmp_path / "s.h5"
    fhdrecon.write_scan(p, s)
    with pytest.raises(ValueError, match=r"normalized_traj = 'no': must be True or False"):
        fhdrecon.read_scan(p, normalized_traj="no")
    with pytest.warns(UserWarning, match=r"read_scan: matrix = 64: ignored \(.*s.h5 is an fhdrecon HDF5 scan"):
        fhdrecon.read_scan(p, matrix=64)
    with pytest.warns(UserWarning, match=r"read_scan: normalized_traj = True: ignored"):
        fhdrecon.read_scan(p, normalized_traj=True)
    with pytest.raises(ValueError, match=r"s.h5: traj = '.*t': is for a BART k-space; this is an HDF5 file"):
        fhdrecon.read_scan(p, traj=tmp_path / "t")
    fhdrecon.write_scan(tmp_path / "k", make_scan(coils=1, noise=False, matrix=(16, 16, 8)), readout=20)
    with pytest.warns(UserWarning, match=r"read_scan: traj_units = 'normalized': ignored \(.*k is BART"):
        fhdrecon.read_scan(tmp_path / "k", traj=tmp_path / "k_traj", matrix=(16, 16, 8), traj_units="normalized")
    if fhdrecon._core.has_ismrmrd():
        fhdrecon.write_scan(tmp_path / "s.mrd", s, readout=20)
        with pytest.warns(UserWarning, match=r"read_scan: matrix = \(8, 8, 8\): ignored \(.*s.mrd is ISMRMRD"):
            fhdrecon.read_scan(tmp_path / "s.mrd", matrix=(8, 8, 8))
