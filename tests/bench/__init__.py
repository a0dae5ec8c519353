"""Tests of the benchmarks in bench/ (smoke runs)."""
