"""Reproductions of the papers' figures and tables, as functions and commands."""
