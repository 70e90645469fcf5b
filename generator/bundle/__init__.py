"""The bundle side: build the signed BagIt bundle, and verify one without trusting its maker."""
