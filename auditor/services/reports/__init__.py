"""The static report: HTML, figures and PNG files."""
