"""dataflow package."""
