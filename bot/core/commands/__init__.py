"""`/digest` commands: parsing a comment into a command (parse.py) and who may run it,
within which budget (permissions.py).
"""
