"""The writer's I/O (issue 41): ask an OpenAI-compatible endpoint (vLLM's own server) for
the written digest; the packet, the request and the verification are bot/core/writer/."""
