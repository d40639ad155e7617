"""The operator desktop app (PySide6 Widgets); the only package that imports Qt."""

from workbench.gui import qt_bytecode as _qt_bytecode

_qt_bytecode.load()  # before Qt loads: shiboken's support modules from bytecode kept by the last start
