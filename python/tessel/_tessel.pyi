# The extension module under the tessel package: an implementation detail
# (use tessel's own names, typed in __init__.pyi).
from typing import Any

__version__: str

def __getattr__(name: str) -> Any: ...
