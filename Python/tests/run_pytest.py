"""Runs the jztree pytest suite; exit code 125 (a skip) without pytest or scipy."""
import sys

try:
    import pytest
    import scipy  # noqa: F401  (the references)
except ImportError as missing:
    print(f"skipped: {missing} (Debian: python3-pytest python3-scipy)")
    sys.exit(125)

sys.exit(pytest.main([sys.argv[1], "-q", "-p", "no:cacheprovider", "-rs"]))
