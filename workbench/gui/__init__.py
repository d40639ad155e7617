"""The operator desktop app (PySide6 Widgets); the only package that imports Qt."""
