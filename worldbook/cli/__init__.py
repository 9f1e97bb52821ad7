"""The worldbook command."""
