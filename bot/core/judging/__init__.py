"""Judging the pull request: its open risks (risks.py) and the verdict, how closely and
for how long to read it (verdict.py).
"""
