"""Small builders for hand-written kernels in IR and backend tests."""
from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType


def gidx(n: int) -> AluExp:
    return AluExp.special("gidx", n)


def ridx(n: int) -> AluExp:
    return AluExp.special("ridx", n)


def load(slot: int, index: AluExp, dtype: DType = DType.float32) -> AluExp:
    return AluExp.load(slot, index, dtype)
