"""The one shared fake GitHub: a state model, an in-memory protocol fake, an HTTP fake."""

from tests.fakes.github_memory import MemoryGitHub
from tests.fakes.github_state import FakeFile, FakeGitHubState, FakeHTTPError

__all__ = ["FakeFile", "FakeGitHubState", "FakeHTTPError", "MemoryGitHub"]
