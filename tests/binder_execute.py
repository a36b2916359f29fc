"""Runs inside the Binder replay's environment (tests/binder_replay.py), under binder/start:
executes one notebook with nbclient and that environment's kernel, in the notebook's own
folder, and writes it with its outputs and widget state. A cell error stops it (exit 1).

    python binder_execute.py KERNEL_NAME NOTEBOOK SAVED
"""
import sys
from pathlib import Path

import nbclient
import nbformat

CELL_TIMEOUT_S = 120   # bounds a hung cell; speed itself is not asserted


def main(kernel: str, notebook: str, saved: str) -> None:
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(nb, kernel_name=kernel, timeout=CELL_TIMEOUT_S,
                                     record_timing=False,   # no timestamps in saved files
                                     resources={"metadata": {"path": str(Path(notebook).parent)}})
    client.execute()
    nbformat.write(nb, saved)


if __name__ == "__main__":
    main(*sys.argv[1:])
