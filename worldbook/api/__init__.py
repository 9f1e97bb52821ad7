"""The FastAPI app."""
