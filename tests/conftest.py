"""Test set-up shared by every test module.

The tests must exercise the installed package with its compiled extension, not
the source folder at the repository root (which has no extension): that folder
is taken off sys.path before anything imports jax_ascend_silu.
"""

import os
import pathlib
import sys

_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if pathlib.Path(p or os.getcwd()).resolve() != _ROOT]

import jax  # noqa: E402

# Eight CPU devices for the sharding tests; must happen before the backend starts.
jax.config.update("jax_num_cpu_devices", 8)
