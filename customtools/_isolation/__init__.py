"""Process isolation: tools imported and run in supervised worker processes.

See docs/isolation.md.
"""
