"""What is read out of the pull request: its description (body, prose, decisions,
mentions, links, value tables) and its patch (symbols, the structure/ reading), gathered
as what is specific to this PR (specifics.py). Text in, plain data out.
"""
