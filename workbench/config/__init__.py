"""Queue configuration: the TOML file that maps an existing table to workbench queues."""
