"""Signing: RSA keys, PAdES certification, detached signatures and the signer's certificate chain."""
