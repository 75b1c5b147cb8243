"""``hermes-model-openai``: the ``openai`` model provider for Hermes sessions.

It talks to any OpenAI-compatible Chat Completions endpoint — OpenAI itself, a llama.cpp
server, Ollama, vLLM — through the official ``openai`` SDK, chosen by ``model.base_url``.
The entry-point module (:mod:`hermes_model_openai.plugin`) only registers the provider; the SDK
is imported on the first call.
"""

from __future__ import annotations

__version__ = "0.1.0"
