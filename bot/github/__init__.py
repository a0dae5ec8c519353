"""The only package that talks to GitHub: a narrow protocol and its githubkit adapter."""
