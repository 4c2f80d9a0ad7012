"""The analysis agent: a smolagents CodeAgent on a LiteLLM model, prompted from templates."""

import os

# LiteLLM fetches its price list from the network at import unless told to use its own copy;
# set before anything imports litellm (smolagents does, lazily).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
