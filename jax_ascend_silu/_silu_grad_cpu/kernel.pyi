# Types of _silu_grad_cpu.kernel (tests/bindings/kernel_bindings.cc, DefineKernelModule):
# the raw two-phase SiluGrad kernel API on strided views of 1-D NumPy buffers.

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

SUCCESS: int
ERR_PARAM_NULLPTR: int
ERR_PARAM_INVALID: int
ERR_INNER_CREATE_EXECUTOR: int
ERR_INNER_NULLPTR: int

def status_name(status: int) -> str:
    """The aclnn name of a status code."""

class View:
    """A strided view (shape, element strides, storage offset) of a 1-D buffer."""

    def __init__(
        self,
        storage: npt.NDArray[np.floating | np.uint16] | None,
        shape: Sequence[int],
        strides: Sequence[int] | None = None,
        offset: int = 0,
        dtype: str | None = None,
        storage_numel: int | None = None,
    ) -> None: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def strides(self) -> list[int] | None: ...
    @property
    def offset(self) -> int: ...
    @property
    def storage_numel(self) -> int: ...
    @property
    def dtype(self) -> str: ...

def plan(grad_output: View | None, self: View | None, grad_input: View | None) -> tuple[int, int]:
    """Phase 1 alone: (status, workspace bytes). None passes a null tensor pointer."""

def run(
    grad_output: View | None,
    self: View | None,
    grad_input: View | None,
    *,
    isa: str = "auto",
    chunk_elements: int = 0,
    threads: int = 1,
    workspace_bytes: int | None = None,
) -> int:
    """Both phases; writes grad_input's view in place and returns the status."""
