"""Argument checks shared by the package's functions: each refuses a bad value
with one ValueError (TypeError for a path of the wrong type) naming the
argument and the value, where int(), bool() and nanobind's casts truncated
2.5 to 2, read 'no' as True or failed with "incompatible function arguments"."""
import operator
import os
import reprlib

import numpy as np


def integral(name, value):
    """value as an int when it is a whole number (an int, a NumPy integer, or a
    whole float such as 8.0), else ValueError naming it. A bool is not a count
    (operator.index(True) is 1: iters=True ran one iteration)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} = {value!r}: must be a whole number, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        f = float(value) if isinstance(value, (float, np.floating)) else None
        if f is None or not f.is_integer():
            raise ValueError(f"{name} = {reprlib.repr(value)}: must be a whole number") from None
        return int(f)


def number(name, value):
    """value as given (the core checks its range and type), but a bool is not a
    number (lam=True ran with lambda 1)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} = {value!r}: must be a number, not a bool")
    return value


def whole(name, value, lo, hi, rule="must lie in"):
    """integral(name, value) in lo..hi, else ValueError naming it ("{name} =
    {n}: {rule} lo..hi"; rule: the core's words where it says the same)."""
    n = integral(name, value)
    if not lo <= n <= hi:
        raise ValueError(f"{name} = {n}: {rule} {lo}..{hi}")
    return n


def flag(name, value):
    """value as a bool when it is one (True, False, a NumPy bool): a string
    such as 'no' is refused rather than read as True."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} = {reprlib.repr(value)}: must be True or False")


def path(name, value):
    """A file name as a str: a str, bytes or any os.PathLike (pathlib.Path)."""
    try:
        return os.fsdecode(value)
    except TypeError:
        raise TypeError(f"{name} = {reprlib.repr(value)}: must be a str, bytes or os.PathLike path") from None
