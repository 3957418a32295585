"""Scoring: predict time and cost of a workload on every offer, rank, explain and advise."""
