"""Who should review: routing.yaml's pools (config.py) and the pure choice of reviewers
and area labels (reviewers.py).
"""
