#!/usr/bin/env python3
"""Image scoring shared by the BART comparison scripts (standard library only).

Images are named as BART .cfl bases ("pics" for pics.cfl/.hdr) or as an HDF5
dataset "images.h5:gridding-kb" (read with h5dump). Scores are on magnitudes.

  python3 bart_score.py REF NAME=IMAGE ...
prints one line per image: its PSNR with one fitted real scale and that scale.
"""
import array
import math
import os
import subprocess
import sys
import tempfile


def read_cfl(base, real=False):
    """Magnitudes (or real parts) of a complex float32 .cfl, in file order."""
    a = array.array('f')
    with open(base + '.cfl', 'rb') as f:
        a.frombytes(f.read())
    return [a[2 * i] if real else math.hypot(a[2 * i], a[2 * i + 1]) for i in range(len(a) // 2)]


def read_h5(path, dataset):
    """A float32 dataset of an HDF5 file (fhdrecon's images.h5 magnitudes)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'dump.bin')
        subprocess.run(['h5dump', '-d', dataset, '-b', 'LE', '-o', out, path], check=True, capture_output=True)
        a = array.array('f')
        with open(out, 'rb') as f:
            a.frombytes(f.read())
    return list(a)


def read_image(name):
    """'file.h5:dataset' or a .cfl base."""
    if '.h5:' in name:
        path, ds = name.split('.h5:', 1)
        return read_h5(path + '.h5', ds)
    return read_cfl(name)


def psnr(img, ref, scale=1.0):
    """docs/conventions.md: magnitude against the reference, peak = max |ref|."""
    mse = sum((scale * x - y) ** 2 for x, y in zip(img, ref)) / len(ref)
    return 20 * math.log10(max(abs(v) for v in ref) / math.sqrt(mse))


def fitted_scale(img, ref):
    """The real scale s minimizing ||s img - ref|| (least squares)."""
    return sum(x * y for x, y in zip(img, ref)) / sum(x * x for x in img)


def fitted_psnr(img, ref):
    """PSNR after one fitted real scale, and that scale: for data whose absolute
    scale against the reference is not derived (3D analytic k-space)."""
    s = fitted_scale(img, ref)
    return psnr(img, ref, s), s


def main(argv):
    ref = read_cfl(argv[1], real=True)
    for arg in argv[2:]:
        name, image = arg.split('=', 1)
        p, s = fitted_psnr(read_image(image), ref)
        print(f'{name} {p:.4f} {s:.6g}')


if __name__ == '__main__':
    main(sys.argv)
