"""arrowmm's tests: one folder per subpackage of arrowmm (a package, so that support code
is imported as ``tests.support.<module>`` from the repository root)."""
