"""hatiproxy test suite (a regular package, so `tests.conftest` never resolves to another
distribution's top-level `tests` package, e.g. the one hatidata-agent installs)."""
