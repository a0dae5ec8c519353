"""The bundled rules on disk: reading the directory (files.py) and caching the compiled
rule set between starts (cache.py). The rules themselves are pure (bot/core/rules/).
"""
