"""Points MRI-NUFFT's test suite at the fhdrecon backend (scripts/mrinufft-tests.sh).

In every test file under TESTS, each backend parametrization that lists
finufft (the backends of our kind: a general 2D/3D NUFFT with coils and maps)
is replaced by ["fhdrecon"]; lists without finufft (cartesian, the GPU-only
stacked operator) are left alone, and their tests skip under --backend
fhdrecon. fhdrecon is added to the backends that helpers.param_array_interface
lets take GPU arrays (CuPy, PyTorch CUDA), since it runs on them.
Prints each file changed and how many lists.
    python3 scripts/mrinufft_point.py TESTS
"""
import pathlib
import re
import sys

LIST = r"\[[^\]]*\]"
PATTERNS = [
    re.compile(r'(parametrize\(\s*"backend",\s*)(' + LIST + ")", re.S),  # parametrize("backend", [...])
    re.compile(r"(parametrize\(\s*backend=)(" + LIST + ")", re.S),  # parametrize(backend=[...])
]


def point(text):
    count = 0

    def swap(m):
        nonlocal count
        if '"finufft"' not in m.group(2):
            return m.group(0)
        count += 1
        return m.group(1) + '["fhdrecon"]'

    for p in PATTERNS:
        text = p.sub(swap, text)
    return text, count


def main(tests):
    root = pathlib.Path(tests)
    for f in sorted(root.rglob("*.py")):
        text = f.read_text()
        new, n = point(text)
        if f.name == "factories.py":
            new = new.replace('"cufinufft",\n                "gpunufft",', '"cufinufft",\n                "fhdrecon",\n                "gpunufft",', 1)
            n += new != text and n == 0
        if new != text:
            f.write_text(new)
            print(f"mrinufft_point: {f.relative_to(root)}: {n} backend list(s) -> fhdrecon")


if __name__ == "__main__":
    main(sys.argv[1])
