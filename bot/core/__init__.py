"""The pure core: facts in, digest and plans out. No I/O, no asyncio (a test enforces it)."""
