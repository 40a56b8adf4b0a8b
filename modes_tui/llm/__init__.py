"""The model seam: protocols, the litellm adapter, the local provider and fakes.

Heavy libraries (litellm, llama_cpp, sentence_transformers) are imported only inside
functions or in adapter modules loaded on demand, never at package import.
"""
