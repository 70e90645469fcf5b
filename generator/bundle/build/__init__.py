"""Building a bundle: the bag's stages, the inputs copied, the bundle published, leftovers cleaned."""
