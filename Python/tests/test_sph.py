"""jztree.sph_projection, sph_slice and sph_volume against scipy quadrature,
direct numpy sums and conservation of mass."""
import numpy as np
import pytest
from conftest import clustered
from scipy import integrate

import jztree


def cubic(r, h):
    q = r / h
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3, 2 * np.clip(1 - q, 0, None) ** 3)
    return 8 / (np.pi * h**3) * np.where(q <= 1, w, 0.0)


def wendland(r, h):
    q = r / h
    return np.where(q <= 1, 21 / (2 * np.pi * h**3) * np.clip(1 - q, 0, None) ** 4 * (1 + 4 * q), 0.0)


KERNELS = {"cubic": cubic, "wendland": wendland}


def scalar_kernel(kernel, h):
    """W(r) on Python floats (fast under scipy's nested quadrature)."""
    norm = 8 / (np.pi * h**3) if kernel == "cubic" else 21 / (2 * np.pi * h**3)

    def W(r):
        q = r / h
        if q > 1:
            return 0.0
        if kernel == "wendland":
            return norm * (1 - q) ** 4 * (1 + 4 * q)
        return norm * (1 - 6 * q * q + 6 * q**3 if q <= 0.5 else 2 * (1 - q) ** 3)

    return W


def test_projection_conserves_mass(dtype):
    pts = clustered(3000, 1, dtype)
    m = np.random.default_rng(2).random(3000) + 0.5
    # The image's area holds every kernel; the line of sight keeps z in [0.3, 0.7).
    region = (-0.5, 1.5, -0.5, 1.5, 0.3, 0.7)
    image = jztree.sph_projection(pts, masses=m, resolution=(80, 60), region=region)
    assert image.shape == (60, 80) and image.dtype == np.float64
    z = pts[:, 2].astype(np.float64)
    inside = (z >= 0.3) & (z < 0.7)
    assert 0 < inside.sum() < len(pts)
    area = (2.0 / 80) * (2.0 / 60)
    assert image.sum() * area == pytest.approx(m[inside].sum(), rel=1e-6)


@pytest.mark.parametrize("kernel", ["cubic", "wendland"])
def test_single_particle_pixel_integrals(kernel):
    h = 0.45
    W = scalar_kernel(kernel, h)
    x0, y0 = 0.43, 0.55
    point = np.array([[x0, y0, 0.5]])

    def column(x, y):
        R2 = (x - x0) ** 2 + (y - y0) ** 2
        if R2 >= h * h:
            return 0.0
        zmax = (h * h - R2) ** 0.5
        return 2 * integrate.quad(lambda z: W((R2 + z * z) ** 0.5), 0, zmax,
                                  epsabs=1e-9, points=[0.5 * h])[0]

    image = jztree.sph_projection(point, masses=[2.0], h=[h], resolution=(3, 3),
                                  region=(0, 1, 0, 1, 0, 1), kernel=kernel)
    area = 1 / 9
    for iy in (0, 1, 2):
        for ix in (0, 1, 2):
            ref = integrate.dblquad(lambda y, x: column(x, y), ix / 3, (ix + 1) / 3,
                                    iy / 3, (iy + 1) / 3, epsabs=1e-8)[0]
            assert image[iy, ix] * area == pytest.approx(2.0 * ref, abs=2e-6)


def test_projection_matches_integrated_volume():
    """The projection's pixel integrals against the volume's voxel integrals
    summed along the line of sight (two different tabulations)."""
    pts = clustered(800, 4)
    region = (-0.4, 1.4, -0.4, 1.4, -0.4, 1.4)
    image = jztree.sph_projection(pts, k=16, resolution=(24, 24), region=region)
    volume = jztree.sph_volume(pts, k=16, resolution=(24, 24, 30), region=region)
    column = volume.sum(axis=0) * (1.8 / 30)
    assert np.allclose(image, column, rtol=1e-5, atol=1e-5 * image.max())


def test_axis_orientation():
    """image[iy, ix]: axis 0 maps (y, z), axis 1 (z, x), rows the second axis."""
    point = np.array([[0.15, 0.35, 0.85]])
    region = (0, 1, 0, 1, 0, 1)
    for axis, (u, v) in ((2, (0, 1)), (0, (1, 2)), (1, (2, 0))):
        image = jztree.sph_projection(point, h=[0.05], axis=axis, resolution=(10, 10),
                                      region=region)
        iy, ix = np.unravel_index(np.argmax(image), image.shape)
        assert (ix, iy) == (int(point[0, u] * 10), int(point[0, v] * 10))


def test_region_from_bounds_and_box():
    pts = clustered(500, 5)
    default = jztree.sph_projection(pts, k=8, resolution=(16, 16))
    lo, hi = pts.min(0), pts.max(0)
    explicit = jztree.sph_projection(pts, k=8, resolution=(16, 16),
                                     region=(lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]))
    assert np.array_equal(default, explicit)
    boxed = jztree.sph_projection(pts, k=8, resolution=(16, 16), box=1.0)
    assert np.array_equal(boxed, jztree.sph_projection(pts, k=8, resolution=(16, 16), box=1.0,
                                                       region=(0, 1, 0, 1, 0, 1)))


def test_periodic_wrap_across_image_edges():
    corner = np.array([[0.02, 0.97, 0.5]])
    image = jztree.sph_projection(corner, masses=[3.0], h=[0.2], resolution=(20, 20), box=1.0)
    assert image.sum() / 400 == pytest.approx(3.0, rel=1e-6)  # nothing lost at the edges
    assert image[0, 0] > 0 and image[-1, -1] > 0 and image[0, -1] > 0
    # Shifting the particle by half the box rolls the image by half its pixels.
    shifted = np.mod(corner + [0.5, 0.5, 0.0], 1.0)
    rolled = jztree.sph_projection(shifted, masses=[3.0], h=[0.2], resolution=(20, 20), box=1.0)
    assert np.allclose(np.roll(image, (10, 10), axis=(0, 1)), rolled, rtol=1e-9,
                       atol=1e-9 * image.max())
    open_image = jztree.sph_projection(corner, masses=[3.0], h=[0.2], resolution=(20, 20),
                                       region=(0, 1, 0, 1, 0, 1))
    assert open_image.sum() / 400 < 0.5 * 3.0


def slice_reference(pts, m, h, position, res, region, arrays, W):
    u0, u1, v0, v1 = region[0], region[1], region[2], region[3]
    xs = u0 + (np.arange(res[0]) + 0.5) * (u1 - u0) / res[0]
    ys = v0 + (np.arange(res[1]) + 0.5) * (v1 - v0) / res[1]
    X, Y = np.meshgrid(xs, ys)  # [iy, ix]
    centres = np.stack([X.ravel(), Y.ravel(), np.full(X.size, position)], 1)
    r = np.linalg.norm(centres[:, None, :] - pts[None, :, :], axis=2)
    w = W(r, h[None, :])
    out = {"density": (w * m).sum(1).reshape(X.shape)}
    rho = (W(np.linalg.norm(pts[:, None] - pts[None], axis=2), h[:, None]) * m[None]).sum(1)
    for name, a in arrays.items():
        a = np.asarray(a, dtype=np.float64)
        coef = (m / rho).reshape((-1,) + (1,) * (a.ndim - 1)) * a
        out[name] = np.tensordot(w, coef, axes=(1, 0)).reshape(X.shape + a.shape[1:])
    return out


@pytest.mark.parametrize("kernel", ["cubic", "wendland"])
def test_slice_against_direct_sum(dtype, kernel):
    rng = np.random.default_rng(6)
    pts = clustered(600, 6, dtype)
    p64 = pts.astype(np.float64)
    m = rng.random(600) + 0.5
    h = 0.05 + 0.1 * rng.random(600)
    temperature = rng.random(600)
    region = (0.1, 0.9, 0.2, 0.8, 0, 0)  # the range along the axis is ignored
    out = jztree.sph_slice(pts, 0.45, masses=m, h=h, resolution=(24, 18), region=region,
                           kernel=kernel, arrays={"T": temperature})
    ref = slice_reference(p64, m, h, 0.45, (24, 18), region, {"T": temperature}, KERNELS[kernel])
    assert sorted(out) == ["T", "density"] and out["T"].shape == (18, 24)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    for name in ("density", "T"):
        assert np.allclose(out[name], ref[name], rtol=tol, atol=tol * ref[name].max())
    # Mapping arrays does not change the density's bits.
    alone = jztree.sph_slice(pts, 0.45, masses=m, h=h, resolution=(24, 18), region=region,
                             kernel=kernel)
    assert np.array_equal(alone["density"], out["density"])


def test_slice_with_computed_h_and_vectors():
    """h=None takes density()'s h (and its density as rho_j)."""
    pts = clustered(500, 7)
    m = np.random.default_rng(8).random(500) + 0.5
    vel = np.random.default_rng(9).standard_normal((500, 3))
    h, _ = jztree.density(pts, 16, masses=m)
    region = (0, 1, 0, 1, 0, 1)
    out = jztree.sph_slice(pts, 0.5, masses=m, k=16, resolution=(12, 12), region=region,
                           arrays={"v": vel})
    ref = slice_reference(pts, m, h, 0.5, (12, 12), region, {"v": vel}, cubic)
    assert out["v"].shape == (12, 12, 3)
    assert np.allclose(out["density"], ref["density"], rtol=1e-6)
    assert np.allclose(out["v"], ref["v"], rtol=1e-5, atol=1e-6)


def test_volume_conserves_mass(dtype):
    pts = clustered(2000, 10, dtype)
    m = np.random.default_rng(11).random(2000) + 0.5
    volume = jztree.sph_volume(pts, masses=m, k=16, resolution=(20, 16, 12),
                               region=(-0.5, 1.5, -0.5, 1.5, -0.5, 1.5))
    assert volume.shape == (12, 16, 20)
    assert volume.sum() * (2 / 20) * (2 / 16) * (2 / 12) == pytest.approx(m.sum(), rel=1e-6)
    # Periodic: the box region keeps every image of every kernel.
    boxed = jztree.sph_volume(pts, masses=m, k=16, resolution=(10, 10, 10), box=1.0)
    assert boxed.sum() * 1e-3 == pytest.approx(m.sum(), rel=1e-6)


def test_empty_input():
    empty = np.zeros((0, 3))
    image = jztree.sph_projection(empty, resolution=(4, 5), region=(0, 1, 0, 1, 0, 1))
    assert image.shape == (5, 4) and not image.any()
    assert jztree.sph_volume(empty, resolution=(2, 3, 4), box=1.0).shape == (4, 3, 2)


def test_bad_input():
    pts = clustered(100, 12)
    region = (0, 1, 0, 1, 0, 1)
    bad_h = np.full(100, 0.1)
    for value in (-0.1, np.nan, np.inf):
        bad_h[3] = value
        with pytest.raises(ValueError, match="h"):
            jztree.sph_projection(pts, h=bad_h, resolution=(4, 4), region=region)
    with pytest.raises(ValueError, match="periodic box"):
        jztree.sph_volume(pts, h=np.full(100, 50.0), resolution=(8, 8, 8), box=1.0)
    with pytest.raises(ValueError, match="Resolution"):
        jztree.sph_projection(pts, k=8, resolution=(0, 4), region=region)
    with pytest.raises(ValueError, match="resolution"):
        jztree.sph_volume(pts, k=8, resolution=(4, 4))
    with pytest.raises(ValueError, match="inverted"):
        jztree.sph_projection(pts, k=8, resolution=(4, 4), region=(1, 0, 0, 1, 0, 1))
    with pytest.raises(ValueError, match="region"):
        jztree.sph_projection(pts, k=8, resolution=(4, 4), region=(0, 1, 0, 1))
    with pytest.raises(TypeError):
        jztree.sph_projection(pts.astype(np.int32), k=8, resolution=(4, 4), region=region)
    with pytest.raises(ValueError, match="kernel"):
        jztree.sph_volume(pts, kernel="gauss", resolution=(2, 2, 2))
    with pytest.raises(ValueError, match="axis"):
        jztree.sph_slice(pts, 0.5, axis=3, resolution=(4, 4))
    with pytest.raises(ValueError, match="k"):
        jztree.sph_projection(pts, k=101, resolution=(4, 4))
    nan_pts = pts.copy()
    nan_pts[5, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        jztree.sph_projection(nan_pts, k=8, resolution=(4, 4), region=region)
    # Without a region it is the points' bounds: an infinite point is named
    # as the point it is, on every map.
    inf_pts = pts.copy()
    inf_pts[7, 0] = np.inf
    for call in (lambda: jztree.sph_projection(inf_pts, k=8, resolution=(4, 4)),
                 lambda: jztree.sph_slice(inf_pts, 0.5, k=8, resolution=(4, 4)),
                 lambda: jztree.sph_volume(inf_pts, k=8, resolution=(4, 4, 4))):
        with pytest.raises(ValueError, match="point 7 has a non-finite coordinate"):
            call()
    with pytest.raises(ValueError, match="density"):
        jztree.sph_slice(pts, 0.5, k=8, resolution=(4, 4), arrays={"density": np.ones(100)})
    with pytest.raises(ValueError):
        jztree.sph_slice(pts, 0.5, k=8, resolution=(4, 4), arrays={"a": np.ones(99)})
    # A map larger than any machine's memory is refused before it is allocated.
    with pytest.raises(ValueError, match="GiB"):
        jztree.sph_slice(pts, 0.5, k=8, resolution=(46340, 46340), arrays={"a": np.ones((100, 1000))})
