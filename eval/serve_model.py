"""Serves the eval's model with llama.cpp's server (xllamacpp) on 127.0.0.1 until killed.

Usage: serve_model.py MODEL.gguf TEMPLATE.jinja PORT

Temperature 0 and a fixed seed make runs repeatable as far as llama.cpp allows; the prompt
cache keeps a shared prefix (the system prompt and tools) between requests and tasks.
"""

import signal
import sys
import threading

import xllamacpp


def main() -> None:
    model, template, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.use_jinja = True
    with open(template, encoding="utf-8") as f:
        params.chat_template = f.read()
    params.n_ctx = 16384
    params.n_predict = 1024
    params.n_parallel = 1
    params.cache_prompt = True
    params.sampling.temp = 0.0
    params.sampling.seed = 42
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.endpoint_props = True
    server = xllamacpp.Server(params)
    print(f"serving on {server.listening_address}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    del server


if __name__ == "__main__":
    main()
