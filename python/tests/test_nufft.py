"""fhdrecon.Plan against finufft 2.5.1 (the reference), against direct sums
in float64, the adjoint identity, and FINUFFT's argument rules."""
import numpy as np
import pytest

import fhdrecon

RNG = np.random.default_rng(24)


def points(m, dim, rng=RNG):
    return [rng.uniform(-np.pi, np.pi, m).astype(np.float32) for _ in range(dim)]


def cvec(shape, rng=RNG):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def rel(a, b):
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def direct(nufft_type, n_modes, pts, data, isign):
    """FINUFFT's definition in float64: modes -N/2 .. on each axis, first axis with x."""
    grids = np.meshgrid(*[np.arange(n) - n // 2 for n in n_modes], indexing="ij")
    k = np.stack([g.ravel() for g in grids])  # (dim, modes)
    ph = np.exp(isign * 1j * (np.stack(pts).astype(np.float64).T @ k))  # (M, modes)
    if nufft_type == 1:
        return (data.astype(np.complex128) @ ph).reshape(n_modes)
    return ph @ data.astype(np.complex128).ravel()


# Our single-precision error is a few times eps down to 1e-5, then float32 rounding.
def bound(eps):
    return max(5 * eps, 1e-5)


@pytest.mark.parametrize("eps", [1e-3, 1e-4, 1e-5, 1e-6])
@pytest.mark.parametrize("n_modes", [(32, 24), (16, 20, 12)], ids=["2d", "3d"])
@pytest.mark.parametrize("nufft_type", [1, 2])
def test_matches_finufft(nufft_type, n_modes, eps, lib):
    finufft = pytest.importorskip("finufft")  # from PyPI in CI; the GPU machine has none
    m = 3000
    pts = points(m, len(n_modes))
    data = cvec(m) if nufft_type == 1 else cvec(n_modes)
    ref = finufft.Plan(nufft_type, n_modes, eps=1e-7, dtype="complex128")
    ref.setpts(*[p.astype(np.float64) for p in pts])
    want = ref.execute(data.astype(np.complex128))
    plan = fhdrecon.Plan(nufft_type, n_modes, eps=eps)
    plan.setpts(*[lib.put(p) for p in pts])
    got = lib.get(plan.execute(lib.put(data)))
    assert got.shape == want.shape
    assert rel(got, want) < bound(eps)


@pytest.mark.parametrize("isign", [1, -1])
@pytest.mark.parametrize("n_modes", [(7, 9), (5, 6, 3)], ids=["2d-odd", "3d-odd"])
@pytest.mark.parametrize("nufft_type", [1, 2])
def test_direct_sum_odd_sizes_and_signs(nufft_type, n_modes, isign, lib):
    m = 200
    pts = points(m, len(n_modes))
    data = cvec(m) if nufft_type == 1 else cvec(n_modes)
    plan = fhdrecon.Plan(nufft_type, n_modes, eps=1e-6, isign=isign)
    plan.setpts(*[lib.put(p) for p in pts])
    got = lib.get(plan.execute(lib.put(data)))
    assert rel(got, direct(nufft_type, n_modes, pts, data, isign)) < 1e-5


def test_points_are_periodic(lib):
    """FINUFFT takes any real point modulo 2 pi; so does the plan."""
    n_modes = (12, 10)
    pts = points(100, 2)
    c = cvec(100)
    shifted = [p + np.float32(2 * np.pi) * s for p, s in zip(pts, (1, -2))]
    outs = []
    for ps in (pts, shifted):
        plan = fhdrecon.Plan(1, n_modes)
        plan.setpts(*[lib.put(p) for p in ps])
        outs.append(lib.get(plan.execute(lib.put(c))))
    assert rel(outs[1], outs[0]) < 1e-5


@pytest.mark.parametrize("n_modes", [(24, 20), (12, 10, 8)], ids=["2d", "3d"])
def test_adjoint_identity(n_modes, lib):
    """<type2(f), c> = <f, type1(c)> with the default signs (type 1 is type 2's adjoint)."""
    m = 1500
    pts = [lib.put(p) for p in points(m, len(n_modes))]
    f, c = cvec(n_modes), cvec(m)
    t1, t2 = fhdrecon.Plan(1, n_modes), fhdrecon.Plan(2, n_modes)
    t1.setpts(*pts)
    t2.setpts(*pts)
    lhs = np.vdot(c, lib.get(t2.execute(lib.put(f))).astype(np.complex128))
    rhs = np.vdot(lib.get(t1.execute(lib.put(c))).astype(np.complex128), f)
    assert abs(lhs - rhs) / abs(lhs) < 1e-5


@pytest.mark.parametrize("nufft_type", [1, 2])
def test_batches_equal_single_transforms(nufft_type, lib):
    n_modes, m, n_trans = (16, 12), 500, 3
    pts = [lib.put(p) for p in points(m, 2)]
    data = cvec((n_trans, m)) if nufft_type == 1 else cvec((n_trans,) + n_modes)
    batch = fhdrecon.Plan(nufft_type, n_modes, n_trans=n_trans)
    batch.setpts(*pts)
    out = lib.get(batch.execute(lib.put(data)))
    assert out.shape == (n_trans,) + (n_modes if nufft_type == 1 else (m,))
    one = fhdrecon.Plan(nufft_type, n_modes)
    one.setpts(*pts)
    # Equal to float32 rounding, not bit for bit: the CPU plan gives each
    # transform of a batch one thread (a lane), while a single transform is
    # spread by every thread into subgrids, which sums in another order.
    for t in range(n_trans):
        single = lib.get(one.execute(lib.put(np.ascontiguousarray(data[t]))))
        np.testing.assert_allclose(out[t], single, rtol=0, atol=1e-6 * np.abs(single).max())


def test_out_argument_is_filled_in_place():
    pts = points(300, 2)
    plan = fhdrecon.Plan(1, (8, 8))
    plan.setpts(*pts)
    out = np.zeros((8, 8), np.complex64)
    res = plan.execute(cvec(300), out=out)
    assert res is out and np.any(out != 0)


def test_numpy_arrays_are_not_copied():
    """A complex64 contiguous input reaches the C interface as it is: the
    core's handle writes into the very buffer given as out."""
    pts = points(100, 2)
    plan = fhdrecon.Plan(2, (8, 8))
    plan.setpts(*pts)
    f = cvec((8, 8))
    out = np.empty(100, np.complex64)
    addr = out.__array_interface__["data"][0]
    plan.execute(f, out=out)
    assert out.__array_interface__["data"][0] == addr


def test_float64_inputs_are_converted_with_a_warning():
    pts = [p.astype(np.float64) for p in points(50, 2)]
    plan = fhdrecon.Plan(1, (8, 8))
    with pytest.warns(UserWarning, match="dtype"):
        plan.setpts(*pts)
    with pytest.warns(UserWarning, match="dtype"):
        out = plan.execute(cvec(50).astype(np.complex128))
    assert out.dtype == np.complex64


@pytest.mark.parametrize(
    "args, kwargs, error",
    [
        ((3, (8, 8)), {}, ValueError),  # type 3
        ((1, (8,)), {}, ValueError),  # 1D
        ((1, (8, 8)), {"dtype": "complex128"}, TypeError),
        ((1, (8, 8)), {"modeord": 1}, ValueError),
        ((1, (8, 8)), {"no_such_option": 1}, TypeError),
        ((1, (8, 8)), {"n_trans": 0}, ValueError),
    ],
)
def test_refused_plans(args, kwargs, error):
    with pytest.raises(error):
        fhdrecon.Plan(*args, **kwargs)


def test_refusals_name_the_value():
    with pytest.raises(ValueError, match=r"nufft_type = '1': fhdrecon offers types 1 and 2"):
        fhdrecon.Plan("1", (8, 8))  # printed as 1 before, like the int it is not
    with pytest.raises(ValueError, match=r"n_modes\[1\] = 0: must lie in 1..65536"):
        fhdrecon.Plan(1, (8, 0))  # the caller's axis (the C side's is reversed), at once
    plan = fhdrecon.Plan(1, (8, 8), eps=0.5)
    with pytest.raises(ValueError, match="tol"):
        plan.setpts(*points(10, 2))
    plan = fhdrecon.Plan(1, (8, 8))
    with pytest.raises(ValueError, match="before setpts"):
        plan.execute(cvec(10))
    plan.setpts(*points(10, 2))
    with pytest.raises(ValueError, match="shape"):
        plan.execute(cvec(11))


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((1, (2**40, 8)), {}, r"n_modes\[0\] = 1099511627776: must lie in 1..65536"),
        ((1, (8, 2**64)), {}, r"n_modes\[1\] = 18446744073709551616: must lie in 1..65536"),
        ((1, (8, -3)), {}, r"n_modes\[1\] = -3: must lie in 1..65536"),
        ((1, (8, 2.5)), {}, r"n_modes\[1\] = 2.5: must be a whole number"),
        ((1, (8, "8")), {}, r"n_modes\[1\] = '8': must be a whole number"),
        ((1, (8, 8)), {"n_trans": 2**31}, r"n_trans = 2147483648: must lie in 1..2147483647"),
        ((1, (8, 8)), {"n_trans": -1}, r"n_trans = -1: must lie in 1"),
        ((1, (8, 8)), {"isign": 2**40}, r"isign = 1099511627776: must lie in -1..1"),
        ((1, (8, 8)), {"isign": 0}, r"isign = 0: must be \+1 or -1"),
        ((1, (8, 8)), {"device": 2**40}, r"device = 1099511627776: must lie in 0..2147483647"),
        ((1, (8, 8)), {"gpu_device_id": -1}, r"device = -1: must lie in 0"),
        ((1, (8, 8)), {"device": "cuda:x"}, r"device = cuda:x: expected"),
        ((1, (8, 8)), {"gpu_stream": -1}, r"gpu_stream = -1: must lie in 0"),
    ],
)
def test_integers_out_of_range_are_value_errors(args, kwargs, message):
    """Each int the C interface takes is checked by name first: int(2.5) gave 2
    silently, and a value beyond int32 reached the compiled module as a
    TypeError about its signature."""
    with pytest.raises(ValueError, match=message):
        fhdrecon.Plan(*args, **kwargs)


def test_whole_floats_and_numpy_integers_are_taken():
    plan = fhdrecon.Plan(np.int64(1), (np.int32(8), 8.0), n_trans=np.uint8(2), isign=-1.0)
    assert plan.n_modes == (8, 8) and plan.n_trans == 2 and plan.isign == -1
    assert all(type(n) is int for n in plan.n_modes)


@pytest.mark.parametrize("n_modes", [(6, 5, 1), (6, 1, 5), (1, 6, 5), (2, 1, 3)])
@pytest.mark.parametrize("nufft_type", [1, 2])
def test_axes_of_one_mode_as_finufft(nufft_type, n_modes, lib):
    """FINUFFT takes n_modes of 1 on an axis (the mode k = 0 alone); so does
    the plan, and it computes the same sum. (It failed at setpts with
    "internal error: nufft: x and y need at least 2 voxels".)"""
    m = 150
    pts = points(m, len(n_modes))
    data = cvec(m) if nufft_type == 1 else cvec(n_modes)
    plan = fhdrecon.Plan(nufft_type, n_modes, eps=1e-6)
    plan.setpts(*[lib.put(p) for p in pts])
    got = lib.get(plan.execute(lib.put(data)))
    assert got.shape == (n_modes if nufft_type == 1 else (m,))
    assert rel(got, direct(nufft_type, n_modes, pts, data, plan.isign)) < 1e-5


@pytest.mark.parametrize("n_modes", [(1, 9), (9, 1), (1, 1), (1, 4, 1), (1, 1, 1)])
def test_fewer_than_two_axes_of_two_modes_is_a_value_error(n_modes):
    """What is left after the axes of one mode must be 2D or 3D: no 1D transform.
    Said when the plan is made, naming n_modes in the caller's order (the
    compiled core, which sees the axes reversed, said "(9, 1)" for (1, 9))."""
    with pytest.raises(ValueError, match=r"at least two axes need 2 or more modes") as e:
        fhdrecon.Plan(1, n_modes)
    assert str(e.value).startswith(f"n_modes = {n_modes}:")


def test_speed_options_of_finufft_are_accepted():
    plan = fhdrecon.Plan(2, (8, 8), nthreads=2, spread_sort=1, gpu_method=1, upsampfac=1.25, eps=1e-3)
    pts = points(100, 2)
    plan.setpts(*pts)
    f = cvec((8, 8))
    assert rel(plan.execute(f), direct(2, (8, 8), pts, f, -1)) < 5e-3


def test_cpu_plan_refuses_gpu_memory_request():
    if fhdrecon.has_cuda():
        pytest.skip("this build has CUDA: device=0 is valid where a GPU exists")
    plan = fhdrecon.Plan(1, (8, 8), device="cuda")
    with pytest.raises(RuntimeError, match="without CUDA"):
        plan.setpts(*points(10, 2))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("axis", [0, 2])
def test_points_that_are_not_finite_are_refused(bad, axis, lib):
    """A NaN or infinite point has no place on the grid: setpts refuses it by
    array and index (execute aborted or crashed the process before)."""
    pts = points(50, 3)
    pts[axis][7] = bad
    plan = fhdrecon.Plan(1, (8, 8, 8))
    with pytest.raises(ValueError, match=r"%s\[7\] = .*points must be finite" % "xyz"[axis]):
        plan.setpts(*[lib.put(p) for p in pts])
    with pytest.raises(ValueError, match="execute after a refused setpts: the plan has no points"):
        plan.execute(lib.put(cvec(50)))  # "execute before setpts" before, though setpts was called


def test_read_only_inputs_are_taken_and_a_read_only_out_refused():
    """Points and data from a memory-mapped file or np.broadcast_to are
    read-only: they are inputs, so they are taken ("std::bad_cast" before)."""
    n_modes, m = (10, 12), 300
    pts, c = points(m, 2), cvec(m)
    plan = fhdrecon.Plan(1, n_modes)
    plan.setpts(*pts)
    want = plan.execute(c)
    for a in (*pts, c):
        a.flags.writeable = False
    ro = fhdrecon.Plan(1, n_modes)
    ro.setpts(*pts)
    assert rel(ro.execute(c), want) < 1e-6
    out = np.zeros(n_modes, np.complex64)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        ro.execute(c, out=out)
    with pytest.raises(ValueError, match="not list"):
        ro.execute(c, out=[0] * 120)


def run_threads(work, n=2):
    """Runs work(i) in n threads; an exception in one fails the test."""
    import threading

    errors = []

    def guarded(i):
        try:
            work(i)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("nufft_type", [1, 2])
def test_one_plan_shared_by_threads_gives_the_single_thread_result(nufft_type):
    """Two threads executing one plan crashed (segfault in the CPU plan's FFT)
    or returned wrong values: the plan's calls now run one at a time."""
    n_modes, m = (12, 12), 2000
    rng = np.random.default_rng(7)
    plan = fhdrecon.Plan(nufft_type, n_modes)
    plan.setpts(*points(m, 2, rng))
    data = cvec(m, rng) if nufft_type == 1 else cvec(n_modes, rng)
    want = plan.execute(data)
    bad = []

    # Type 1 sums in an order that varies from call to call (1e-8 apart); a
    # result mixed with another call's is O(1) off.
    def work(_):
        for _ in range(300):
            if rel(plan.execute(data), want) > 1e-6:
                bad.append(1)

    run_threads(work)
    assert not bad


def test_setpts_in_one_thread_while_another_executes():
    """Segfaulted every time: each result is now one of the two point sets' answers."""
    n_modes = (16, 16, 16)
    rng = np.random.default_rng(8)
    sets = [points(m, 3, rng) for m in (3000, 50)]
    f = cvec(n_modes, rng)
    plan = fhdrecon.Plan(2, n_modes)
    want = {}
    for pts in sets:
        plan.setpts(*pts)
        want[len(pts[0])] = plan.execute(f)
    bad = []

    def work(i):
        for k in range(200):
            if i == 0:
                plan.setpts(*sets[k % 2])
                continue
            got = plan.execute(f)
            if rel(got, want[len(got)]) > 1e-6:
                bad.append(1)

    run_threads(work)
    assert not bad


def test_a_plan_is_not_copied():
    """copy.copy shared the compiled plan: setpts on the copy changed the original."""
    import copy
    import pickle

    plan = fhdrecon.Plan(1, (8, 8))
    plan.setpts(*points(10, 2))
    for make in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            make(plan)


@pytest.mark.parametrize("eps", [1e-5, 1e-6, 1e-7])
@pytest.mark.parametrize("nufft_type", [1, 2])
def test_upsampfac_125_below_1e4_is_as_accurate_as_asked(nufft_type, eps):
    """upsampfac 1.25 below eps 1e-4 is taken as 2.0, on the CPU as on the GPU
    (single precision cannot reach it on the 1.25 grid): the CPU was 3.4e-4 off
    at eps 1e-7 and 4.7e-5 at 1e-6 (24x24) against the float64 direct sum."""
    n_modes, m = (24, 24), 2000
    rng = np.random.default_rng(7)
    pts = points(m, 2, rng)
    data = cvec(m, rng) if nufft_type == 1 else cvec(n_modes, rng)
    want = direct(nufft_type, n_modes, pts, data, 1 if nufft_type == 1 else -1)
    got = {}
    for f in (1.25, 2.0):
        plan = fhdrecon.Plan(nufft_type, n_modes, eps=eps, upsampfac=f, device="cpu")
        plan.setpts(*pts)
        got[f] = plan.execute(data)
    assert rel(got[1.25], want) < bound(eps)
    assert rel(got[1.25], got[2.0]) < 1e-6  # the same plan (up to the threads' order of sums)
