"""Verifying a bundle: the manifest, the seal it carries, and the verdict's assembly."""
