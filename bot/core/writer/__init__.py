"""The writer (issue 41): a language model words the digest from its facts. Pure: the
packet a model is given, the request that carries it, and the verification of its reply
before anything is shown. Talking to the endpoint is bot/writer/."""
