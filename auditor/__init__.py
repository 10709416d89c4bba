"""auditor: continuous inter- and intra-rater reliability for labeling teams."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # ``__version__`` on first use: importlib.metadata costs 40 ms of every CLI start-up.
    if name != "__version__":
        raise AttributeError(f"module 'auditor' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("auditor")
    except PackageNotFoundError:  # running from a source tree that was not installed
        found = "0.0.0+source"
    globals()["__version__"] = found
    return found
