"""`GitHubSessionFactory.installation_repositories` against the fake GitHub server."""

from __future__ import annotations

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from githubkit_schemas.latest.models import (
    Installation,
    InstallationRepositoriesGetResponse200,
)

from bot.github.protocol import GitHubError
from bot.observe.metrics import Metrics
from tests.fakes import responses
from tests.fakes.github_http import FakeGitHubServer
from tests.fakes.github_state import FakeGitHubState
from tests.github_env import make_factory
from tests.keys import PUBLIC_KEY_PEM

INSTALLATIONS = "/app/installations"
REPOSITORIES = "/installation/repositories"
TOKENS = "/app/installations/{installation_id}/access_tokens"


@pytest.fixture
def state(server: FakeGitHubServer) -> FakeGitHubState:
    """Two installations; vllm-project has one live and one archived repo."""
    s = FakeGitHubState(app_public_key_pem=PUBLIC_KEY_PEM,
                        installations={11: "vllm-project", 22: "neuralmagic"})
    s.add_repo("vllm-project/vllm-old").archived = True
    s.add_repo("vllm-project/vllm")
    s.add_repo("neuralmagic/guidellm")
    s.add_repo("someone-else/not-installed")
    server.use(s)
    return s


@pytest.fixture
def url(server: FakeGitHubServer, state: FakeGitHubState) -> str:
    return server.url


async def test_lists_unarchived_repos_of_every_installation(state: FakeGitHubState,
                                                            url: str) -> None:
    pairs = await make_factory(url).installation_repositories()
    assert pairs == [(11, "vllm-project/vllm"), (22, "neuralmagic/guidellm")]
    assert state.count("GET", INSTALLATIONS) == 1
    assert state.count("POST", TOKENS) == 2
    assert state.count("GET", REPOSITORIES) == 2


async def test_small_limit_pages_both_lists_and_stops_early(state: FakeGitHubState,
                                                            url: str) -> None:
    # limit=1 means per_page=1: two pages of installations, and the archived repo
    # fills the first page of repositories, so the live one needs a second page.
    pairs = await make_factory(url).installation_repositories(limit=1)
    assert pairs == [(11, "vllm-project/vllm")]
    assert state.count("GET", INSTALLATIONS) == 2
    assert state.count("GET", REPOSITORIES) == 2
    assert state.count("POST", TOKENS) == 1  # the second installation was never needed
    paged = [c.path for c in state.calls if c.route == REPOSITORIES]
    assert paged == [REPOSITORIES, REPOSITORIES]


async def test_pages_follow_link_headers_past_archived_repos(state: FakeGitHubState,
                                                             url: str) -> None:
    for i in range(4):
        state.add_repo(f"neuralmagic/archived{i}").archived = True
    state.add_repo("neuralmagic/live")
    pairs = await make_factory(url).installation_repositories(limit=3)
    assert pairs == [(11, "vllm-project/vllm"), (22, "neuralmagic/guidellm"),
                     (22, "neuralmagic/live")]
    # per_page=3: one page for vllm-project's 2 repos, two for neuralmagic's 6.
    assert state.count("GET", REPOSITORIES) == 3


async def test_502_on_either_list_is_retried(state: FakeGitHubState, url: str) -> None:
    state.fail_next("GET", INSTALLATIONS, 502)
    state.fail_next("GET", REPOSITORIES, 502)
    pairs = await make_factory(url).installation_repositories()
    assert pairs == [(11, "vllm-project/vllm"), (22, "neuralmagic/guidellm")]
    assert state.count("GET", INSTALLATIONS) == 2
    assert state.count("GET", REPOSITORIES) == 3


async def test_persistent_5xx_becomes_github_error(state: FakeGitHubState, url: str) -> None:
    state.fail_next("GET", REPOSITORIES, 503, times=5)
    with pytest.raises(GitHubError) as info:
        await make_factory(url).installation_repositories()
    assert info.value.status == 503
    assert state.count("GET", REPOSITORIES) == 3


async def test_wrong_app_key_is_a_github_error(state: FakeGitHubState, url: str) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    with pytest.raises(GitHubError) as info:
        await make_factory(url, private_key=other).installation_repositories()
    assert info.value.status == 401
    assert other.splitlines()[1] not in str(info.value)
    assert state.count("GET", REPOSITORIES) == 0


async def test_endpoints_demand_the_right_credentials(state: FakeGitHubState,
                                                      url: str) -> None:
    token, _ = state.issue_token(22)
    async with httpx.AsyncClient(base_url=url) as client:
        # An installation token is not a JWT, and vice versa.
        as_token = {"Authorization": f"token {token}"}
        assert (await client.get(INSTALLATIONS, headers=as_token)).status_code == 401
        assert (await client.get(REPOSITORIES)).status_code == 401
        listed = await client.get(REPOSITORIES, headers=as_token, params={"per_page": 1})
    body = listed.json()
    assert body["total_count"] == 1
    assert [r["full_name"] for r in body["repositories"]] == ["neuralmagic/guidellm"]
    assert "next" not in listed.headers.get("link", "")


async def test_cached_token_is_reused_and_a_revoked_one_forgotten(
    state: FakeGitHubState, url: str
) -> None:
    factory = make_factory(url)
    await factory.installation_token(11)
    await factory.installation_repositories()
    assert state.count("POST", TOKENS) == 2  # 11 minted once, 22 once
    for token, (installation_id, _) in list(state.tokens.items()):
        if installation_id == 22:
            del state.tokens[token]  # GitHub revoked it
    with pytest.raises(GitHubError) as info:
        await factory.installation_repositories()
    assert info.value.status == 401
    assert await factory.installation_repositories() == [
        (11, "vllm-project/vllm"), (22, "neuralmagic/guidellm")]
    assert state.count("POST", TOKENS) == 3  # only 22's token was minted again


async def test_calls_are_counted_by_the_metrics_hooks(state: FakeGitHubState,
                                                      url: str) -> None:
    metrics = Metrics()
    await make_factory(url, metrics).installation_repositories()
    total = sum(sample.value for family in metrics.registry.collect()
                if family.name == "digest_github_calls" for sample in family.samples
                if sample.name == "digest_github_calls_total")
    assert total == len(state.calls) == 5
    remaining = metrics.registry.get_sample_value(
        "digest_github_rate_limit_remaining", {"installation": "22"})
    assert remaining == state.rate_limit_remaining


async def test_no_limit_means_no_calls(state: FakeGitHubState, url: str) -> None:
    assert await make_factory(url).installation_repositories(limit=0) == []
    assert state.calls == []


def test_builders_parse_with_githubkit_models(state: FakeGitHubState) -> None:
    parsed = Installation.model_validate(
        responses.installation(11, "vllm-project", 4242, "pr-digest"))
    assert (parsed.id, parsed.app_slug, parsed.suspended_at) == (11, "pr-digest", None)
    assert parsed.account is not None
    repos = [responses.installation_repository(r) for r in state.repos.values()]
    page = InstallationRepositoriesGetResponse200.model_validate(
        responses.installation_repositories(repos, len(repos)))
    assert [(r.full_name, r.archived) for r in page.repositories][:2] == [
        ("vllm-project/vllm-old", True), ("vllm-project/vllm", False)]
    assert page.repositories[1].contents_url.startswith(
        "https://api.github.com/repos/vllm-project/vllm/contents/")
