"""The model seam: protocols, the litellm adapter, the local provider and fakes.

Heavy libraries (litellm, llama_cpp, sentence_transformers) are imported only inside
functions or in adapter modules loaded on demand, never at package import.

    discovery.py        What providers this machine can reach (key variables, servers on
                        127.0.0.1), for `modes-tui init`
    encoders.py         Encoders for the embedding router: text in, one L2-normalised vector per
                        text out
    fake.py             A scripted model: answers from a script, for tests, demos and
                        screenshots
    gguf.py             The embedded model's GGUF file: found in its PyPI package, assembled
                        once, verified
    litellm_import.py   Importing litellm: lazily, once, with its environment set first
    litellm_model.py    The litellm adapter: the only module that calls litellm for chat
    llama_runner.py     The llama.cpp runner: one in-process model, loaded on first use, one
                        generation at a time
    local.py            The embedded default model `local/gemma-3-270m`, served to litellm as a
                        custom provider
    local_probe.py      One HTTP request to a server on 127.0.0.1, finished or given up within a
                        deadline
    minilm_numpy.py     The encoder's layers in numpy, where onnxruntime is missing
    minilm_onnx.py      The encoder's layers as an ONNX graph (written here), run by onnxruntime
    model_child.py      The local model process: one `LlamaRunner` serving the app over a socket
                        pair
    model_process.py    The embedded model in a child process: a native crash there is a failed
                        turn, not the app's
    provider_errors.py  litellm's failures as one `ProviderError`: its kind, the provider's own
                        words, a hint
    router_backends.py  Factories for the routing backends that need a model or an encoder
    transcript.py       Chat messages as the plain transcript a base model continues
"""
