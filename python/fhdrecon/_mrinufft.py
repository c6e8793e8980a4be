"""Registers fhdrecon's MRI-NUFFT backend when mrinufft is installed."""
import importlib.util


def register():
    if importlib.util.find_spec("mrinufft") is None:
        return False
    from . import mrinufft_backend  # noqa: F401  (defining the subclass registers it)

    return True
