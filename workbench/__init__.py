"""workbench: work a queue of records in an ordinary database table without stepping on each other."""

__version__ = "0.1.0"
