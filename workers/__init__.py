"""Celery app and thin tasks that call worldbook indexing functions."""
