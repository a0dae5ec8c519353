"""What an operator sees of the process: JSON log lines with secrets redacted (logs.py)
and Prometheus metrics (metrics.py).
"""
