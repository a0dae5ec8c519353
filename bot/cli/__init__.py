"""`digest-bot` (and `python -m bot`): the command line. main.py parses and dispatches;
ops.py holds the operator commands (jobs, previews), check_config.py the override
check, index.py the symbol index commands, online.py one digest against the API.
"""
