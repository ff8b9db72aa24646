"""Measurements: the performance benchmark (and, later, the pollution and LoCoMo evaluations)."""
