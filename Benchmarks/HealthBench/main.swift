// Benchmark entry point; see Benchmarks/README.md.
print("not written yet")
