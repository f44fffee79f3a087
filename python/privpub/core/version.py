"""The installed library version, recorded in every release."""

from importlib.metadata import PackageNotFoundError, version

try:
    LIBRARY_VERSION = version("privpub")
except PackageNotFoundError:  # running from a source tree without an install
    LIBRARY_VERSION = "0+unknown"
