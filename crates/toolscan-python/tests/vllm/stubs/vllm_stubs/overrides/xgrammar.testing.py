"""Stands for xgrammar.testing (test helpers over torch)."""
