"""Database side of the engine: SQLAlchemy Core statements, per-database claim methods, audit trail."""
