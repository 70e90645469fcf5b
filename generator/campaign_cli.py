"""Placeholder for the `campaign` command's argument parsing (filled in by issue 8)."""

from __future__ import annotations

import argparse


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register `gpu-audit campaign`; a placeholder until the command exists."""
