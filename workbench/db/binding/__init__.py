"""The parts a queue's config is bound to its reflected table with; db/mapping.py's BoundQueue puts them together."""
