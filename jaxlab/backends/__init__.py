"""Backends register here; each one that starts becomes a jaxlab device."""
from jaxlab.backends.cpu import CpuBackend
from jaxlab.engine.devices import register_backend

register_backend("cpu", CpuBackend, priority=0)
