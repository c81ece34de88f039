"""Test support shipped with the package (used by the tests and benchmarks, never by
the library itself): a loopback OpenAI-compatible server with fault injection."""
