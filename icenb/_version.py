"""icenb's version, in a module of its own: lower layers read it without importing the package
root (the composition root imports them)."""

__version__ = "0.1.0"
