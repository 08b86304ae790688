"""hloverlap's version: the one number for the Python package, its metadata
(the build backend reads it) and the C++ tool (`hloverlap --version`;
CMakeLists.txt reads this file)."""

__version__ = "0.1.0"
