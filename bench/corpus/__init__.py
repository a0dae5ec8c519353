"""The real-PR corpus (issue 44): release repository, cutting PR patches, judge packets.

`python -m bench corpus …` is the entry point (bench/corpus/cli.py).
"""
