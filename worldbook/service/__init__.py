"""Use cases that wire the pure core to the ports."""
