"""A provider's invoice: read in a bounded child, its sums reconciled with a verified bundle, the note attached."""
