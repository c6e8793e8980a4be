"""The package as users meet it: its stubs cover what it exports, its
docstrings exist, and importing it registers the MRI-NUFFT backend."""
import ast
import inspect
import os

import pytest

import fhdrecon


def stub_names():
    path = os.path.join(os.path.dirname(fhdrecon.__file__), "__init__.pyi")
    tree = ast.parse(open(path).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_stubs_cover_the_exports():
    missing = set(fhdrecon.__all__) - stub_names()
    assert not missing, f"in __all__ but not in __init__.pyi: {sorted(missing)}"


@pytest.mark.parametrize("name", fhdrecon.__all__)
def test_every_export_has_a_docstring(name):
    obj = getattr(fhdrecon, name)
    assert inspect.getdoc(obj), f"fhdrecon.{name} has no docstring"


def test_import_registers_the_mrinufft_backend():
    mrinufft = pytest.importorskip("mrinufft")
    assert "fhdrecon" in mrinufft.list_backends(available_only=True)
    assert mrinufft.get_operator("fhdrecon").backend == "fhdrecon"
