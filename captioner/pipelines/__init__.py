"""Batch work on a distributed engine (Apache Beam), thin over `captioner.models` and
`captioner.inference`: `captioner.pipelines.caption` captions image files or URIs through
Beam's RunInference (`captioner pipeline caption`). Apache Beam is imported by the modules
here, never by `import captioner`."""
