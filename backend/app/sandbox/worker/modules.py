"""The libraries a worker imports at start and those it warms (the runtime cache compiles
them all, `app/sandbox/runtime_cache.py`)."""

# Pre-imported so that the first step is fast; the runtime cache compiles them.
STARTUP_MODULES = (
    "numpy",
    "pandas",
    "matplotlib.pyplot",
    "plotly.graph_objects",
    "plotly.io",
    "plotly.express",
)
# What pandas and pyarrow import on first use, not with pandas: Arrow-backed strings (every
# CSV with text columns) and every snapshot's trip to and from Parquet. Pre-imported too (a
# worker would otherwise load them in its first run); imported only, never used: pyarrow's
# first use reserves over a gigabyte of address space, which RLIMIT_AS counts.
FIRST_USE_MODULES = (
    "pyarrow.parquet",
    "pyarrow.pandas_compat",
    "pyarrow.vendored.version",
    "pandas.core.arrays.arrow.extension_types",
)
# Compiled into the runtime cache too (imported by steps, not at start-up).
WARM_MODULES = (
    "scipy",
    "scipy.stats",
    "sklearn",
    "sklearn.linear_model",
    "sklearn.ensemble",
    "sklearn.model_selection",
    "sklearn.preprocessing",
    "sklearn.metrics",
    "sklearn.cluster",
    "sklearn.decomposition",
    "statsmodels.api",
    "statsmodels.formula.api",
    "seaborn",
    "pyarrow.parquet",
    "openpyxl",
    # Loaded by the first step that imports it, never at start-up: its library alone takes
    # about 85 MB of address space, which every worker would pay.
    "duckdb",
)
