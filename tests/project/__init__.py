"""Project-level checks: layers, lint, typing, docs, README, packaging, wheel, benchmarks, no
silent skips, the layout of the tests themselves."""
