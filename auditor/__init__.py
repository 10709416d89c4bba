"""auditor: continuous inter- and intra-rater reliability for labeling teams."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("auditor")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
