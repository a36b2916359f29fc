"""Backends: kernels, routines and buffers on one kind of device (base.py: the protocol).
They know nothing of the engine; engine/platforms.py lists them for its registry."""
