"""ctest's entry to the Python tests: pytest on python/tests, or exit 77
(ctest's SKIP_RETURN_CODE) saying why when pytest is not installed."""
import sys

try:
    import pytest
except ImportError:
    print(f"skipped: pytest is not installed for {sys.executable} (apt-get install python3-pytest)")
    sys.exit(77)

# No .pytest_cache in the source tree.
sys.exit(pytest.main(["-p", "no:cacheprovider", "-rs", *sys.argv[1:]]))
