// shared helpers for tests
