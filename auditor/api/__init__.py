"""HTTP shell: parse, call one service function, render."""

from auditor.api.app import create_app

__all__ = ["create_app"]
