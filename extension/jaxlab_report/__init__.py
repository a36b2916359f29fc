"""The prebuilt JupyterLab extension that renders jaxlab reports (see ../README.md)."""


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    # lets `jupyter labextension develop .` link the build output
    return [{"src": "labextension", "dest": "jaxlab-report"}]
