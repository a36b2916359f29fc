"""The lab: reports, magics and widgets over the engine's KernelEvents.

`%load_ext jaxlab` (or `jaxlab.lab`) registers %%kernel and %jaxlab; importing
this package does not import IPython (the magics load on demand).
"""
from typing import Any

from jaxlab.lab.report import Comparison, ErrorReport, Report

__all__ = ["Comparison", "ErrorReport", "Report", "browse", "load_ipython_extension",
           "unload_ipython_extension"]


def load_ipython_extension(ip: Any) -> None:
    from jaxlab.lab.magics import load_ipython_extension as load
    load(ip)


def unload_ipython_extension(ip: Any) -> None:
    from jaxlab.lab.magics import unload_ipython_extension as unload
    unload(ip)


def browse(log: Any) -> Any:
    """The interactive kernel browser of a capture() log (needs ipywidgets)."""
    from jaxlab.lab.widgets import browse as widget_browse
    return widget_browse(log)
