"""Parts of the search-quality benchmark (``benchmarks/search_quality.py``).

- :mod:`.recorded`: a recorded Kernel Tuner space as a lookup table (config key ->
  recorded time), its optimum, and the scoring of one run's trace;
- :mod:`.kt_runner`: Kernel Tuner's strategies replayed in simulation mode;
- :mod:`.our_runner`: our strategies through ``search.tuner.tune`` on a replayed space;
- :mod:`.strategies`: the strategy groups expanded and every name checked;
- :mod:`.report`: per-(space, strategy, budget) summaries, the markdown table, the plot.

The package is called ``sq`` rather than ``search_quality`` so that it cannot shadow
the script ``benchmarks/search_quality.py`` on import.
"""
