// IMPORTANT for whoever writes this file: first read /tmp/provider-common.md (build lock rules:
// wrap every swift build/test in `flock /tmp/ctxhost-build.lock`, never pipe a build into head;
// no git commands that change state; do not edit Package.swift or README.md; finish by 21:45 UTC).
// Benchmark entry point; see Benchmarks/README.md.
print("not written yet")
