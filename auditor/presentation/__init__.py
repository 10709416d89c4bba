"""What the people see: the dashboard's pages and the static report, rendered from the read
services' dataclasses (one Jinja template per page, SVG figures, PNG figures).

A layer between the shells and the services: ``auditor.web`` serves these pages, ``auditor.cli``
writes the report; the services return data and never import this package.
"""
