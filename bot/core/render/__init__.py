"""The digest as the comment GitHub shows: Markdown sections within the comment's budget
(comment.py is the entry), both languages (i18n, zh_text), escaping of everything
untrusted, the hidden marker and the sticky-comment plan.
"""
