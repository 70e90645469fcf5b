"""Placeholder for the `measure` command's argument parsing (filled in by issue 6)."""

from __future__ import annotations

import argparse


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register `gpu-audit measure`; a placeholder until the command exists."""
