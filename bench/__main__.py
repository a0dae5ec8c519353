"""`python -m bench`: the quick benchmarks (engine and matching); intake has its own CLI."""

from __future__ import annotations

from bench import bench_engine, bench_match

print("== rule matching (bench.bench_match) ==")
bench_match.main()
print("\n== whole digest (bench.bench_engine) ==")
bench_engine.main()
print("\nWebhook intake: python -m bench.bench_intake (see bench/README.md)")
