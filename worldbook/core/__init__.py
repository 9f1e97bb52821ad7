"""The pure core: plain data in, plain data out. No I/O, no SQL, FAISS, HTTP, Celery or models."""
