"""Queue domain types shared by the engine, the CLI and the GUI; imports neither Qt nor SQLAlchemy."""
