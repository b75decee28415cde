"""Serving: the HTTP JSON API over loaded models (`app.create_app`), with request batching
(`batcher.Batcher`). `captioner serve` runs it with uvicorn; thin over `captioner.models`."""
