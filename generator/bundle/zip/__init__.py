"""The zip form: a zip's bytes walked, its extra fields allowed, its entries checked and extracted."""
