"""The stages of a power-of-two Stockham FFT, shared by the backends that generate one."""
from __future__ import annotations


def stages(n: int) -> list[tuple[int, int]]:
    """(radix, points combined before the stage) for each stage of a length-n transform:
    radix 4 while four or more points remain per group, then one radix-2 stage."""
    out, ns = [], 1
    while ns < n:
        radix = 4 if n // ns >= 4 else 2
        out.append((radix, ns))
        ns *= radix
    return out


def fft_flops(n: int, rows: int = 1) -> int:
    """The conventional count of a complex transform: 5 n log2 n per row."""
    return 5 * n * (n.bit_length() - 1) * rows if n > 1 else 0
