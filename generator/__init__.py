"""gpu-audit: audit a GPU benchmarking campaign and render a signed decision note."""

__version__ = "0.1.0"
