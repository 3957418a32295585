"""The on-VM probe: hardware micro-benchmarks, workload step profiler, environment doctor."""
