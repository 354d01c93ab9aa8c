"""Paper checks (``edgeworth check``).

Each paper module exposes ``checks(quick: bool) -> list[CheckRow]``.
"""
