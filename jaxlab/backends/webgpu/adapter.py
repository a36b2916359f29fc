"""Finding an adapter: a hardware GPU first, Mesa's lavapipe when there is none
(or when JAXLAB_WEBGPU_ADAPTER=software), and a quiet XDG_RUNTIME_DIR for Mesa."""
from __future__ import annotations

import os
import stat
import tempfile
from typing import Any, Optional

ENV_CHOICE = "JAXLAB_WEBGPU_ADAPTER"   # "hardware", "software", or unset (either)

# Best first; lavapipe reports "CPU". Vulkan/Metal/D3D12 before OpenGL (fewer
# storage buffers per stage, no shader-f16 through wgpu's GL backend).
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "Unknown": 2, "CPU": 3}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 1}


def ensure_runtime_dir() -> None:
    """Mesa prints a warning at every adapter request unless XDG_RUNTIME_DIR is a
    directory we own with mode 0700: point it at one when it is unset or unusable."""
    if _usable(os.environ.get("XDG_RUNTIME_DIR")):
        return
    path = os.path.join(tempfile.gettempdir(), f"jaxlab-runtime-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        path = ""
    os.environ["XDG_RUNTIME_DIR"] = path if _usable(path) else tempfile.mkdtemp(prefix="jaxlab-")


def _usable(path: Optional[str]) -> bool:
    try:
        st = os.stat(path) if path else None
    except OSError:
        return False
    return st is not None and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and \
        stat.S_IMODE(st.st_mode) & 0o077 == 0


def is_hardware(adapter: Any) -> bool:
    # software rasterisers (lavapipe, llvmpipe's GL) say "CPU"; NVIDIA's GL says "Unknown"
    return adapter.info.get("adapter_type") != "CPU"


def select_adapter(choice: Optional[str] = None) -> Any:
    """The adapter to use, or RuntimeError saying why there is none."""
    ensure_runtime_dir()
    import wgpu
    choice = (choice if choice is not None else os.environ.get(ENV_CHOICE, "")).lower()
    if choice not in ("", "hardware", "software"):
        raise ValueError(f"{ENV_CHOICE}={choice!r}: use 'hardware' or 'software'")
    adapters = list(wgpu.gpu.enumerate_adapters_sync())
    if choice:
        adapters = [a for a in adapters if is_hardware(a) == (choice == "hardware")]
    if not adapters:
        found = "" if not choice else f" of kind {choice!r}"
        raise RuntimeError(f"no WebGPU adapter{found}: on Linux without a GPU install Mesa's "
                           "software Vulkan (apt-get install mesa-vulkan-drivers)")
    return min(adapters, key=lambda a: (_TYPE_RANK.get(a.info.get("adapter_type"), 2),
                                        _BACKEND_RANK.get(a.info.get("backend_type"), 1)))


def describe(adapter: Any) -> dict[str, Any]:
    info = adapter.info
    return {k: info.get(k) for k in ("vendor", "device", "description", "adapter_type",
                                     "backend_type")}
