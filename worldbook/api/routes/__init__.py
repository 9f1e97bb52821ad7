"""One router per resource; :func:`worldbook.api.app.create_app` mounts them under ``/v1``."""
