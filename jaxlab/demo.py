"""`python -m jaxlab.demo [--backend NAME]`: an MLP forward pass, kernel by kernel.

Runs a 784-512-512-10 MLP with log-softmax on a batch of 64 inside
`jaxlab.capture()`, prints one line per kernel it ran, the IR of each kernel,
and the largest difference from the same computation in NumPy.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

import numpy as np

import jaxlab
import jaxlab.numpy as jnp

LAYERS = (784, 512, 512, 10)
BATCH = 64
TOLERANCE = 1e-4


def init_params(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """He-initialised (weight, bias) pairs, float32, from a fixed seed."""
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32),
             (rng.standard_normal(n_out) * 0.1).astype(np.float32))
            for n_in, n_out in zip(LAYERS[:-1], LAYERS[1:])]


def mlp(xp: Any, params: Sequence[tuple[Any, Any]], x: Any) -> Any:
    """The forward pass, written once for any NumPy-like module `xp`."""
    for w, b in params[:-1]:
        x = xp.maximum(x @ w + b, 0.0)
    w, b = params[-1]
    logits = x @ w + b
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxlab.demo",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--backend", metavar="NAME", help="device to run on (default: the default device); "
                        f"available: {', '.join(d.platform for d in jaxlab.devices())}")
    args = parser.parse_args(argv)

    params = init_params()
    x = np.random.default_rng(1).standard_normal((BATCH, LAYERS[0])).astype(np.float32)
    try:
        device = jaxlab.devices(args.backend)[0] if args.backend else jaxlab.devices()[0]
    except IndexError:
        print(f"no device {args.backend!r} here; available: "
              f"{', '.join(d.platform for d in jaxlab.devices())}", file=sys.stderr)
        return 2

    with jaxlab.default_device(device):
        jparams = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
        jx = jnp.asarray(x)
        start = time.perf_counter()
        with jaxlab.capture() as log:
            out = mlp(jnp, jparams, jx).block_until_ready()
        seconds = time.perf_counter() - start

    arch = "-".join(map(str, LAYERS))
    print(f"MLP {arch} with log-softmax, batch {BATCH}, on {device.platform}: "
          f"{len(log)} kernels in {seconds * 1e3:.0f} ms\n")
    print(f"{'kernel':<24} {'output':>14} {'backend':<7} {'time':>12}")
    for event in log:
        print(event.summary())
    for event in log:
        print(f"\n{event.ir}")

    error = float(np.max(np.abs(np.asarray(out) - mlp(np, params, x))))
    verdict = "OK" if error < TOLERANCE else f"MISMATCH (tolerance {TOLERANCE})"
    print(f"\nmax |jaxlab - numpy| = {error:.2e}  {verdict}")
    return 0 if error < TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
