"""One reading of the patch: hunks split into pieces, removed and added lines paired,
new code read whole, and the notes a reviewer gets from them (read.py is the entry).
"""
