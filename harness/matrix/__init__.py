"""Matrices and inventories: their models and their loading."""

from harness.matrix.load import load_inventory, load_matrix
from harness.matrix.models import Host, Matrix, RuntimeSpec, Settings

__all__ = ["Host", "Matrix", "RuntimeSpec", "Settings", "load_inventory", "load_matrix"]
