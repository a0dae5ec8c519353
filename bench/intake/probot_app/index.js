// The Probot baseline of pr-digest's webhook-intake benchmark (bench/bench_intake.py).
// Probot's middleware (@octokit/webhooks) verifies X-Hub-Signature-256 before any
// handler runs; the handler itself does nothing. context.octokit is built lazily by
// @octokit/auth-app, so no token is minted and GitHub is never contacted.
export default (app) => {
  app.on("pull_request", async () => {});
};
