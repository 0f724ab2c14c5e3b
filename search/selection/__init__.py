"""Per-layer algorithm selection: direct or Winograd F(e), with evidence and a predictor.

- :mod:`~search.selection.dataset`: candidates, the :class:`LabelRecord` interface,
  examples, synthetic layer shapes;
- :mod:`~search.selection.labels`: labels from a measurer (the oracle of each pruned space);
- :mod:`~search.selection.history_source`: labels from the tuning history database;
- :mod:`~search.selection.features`: layer and device features;
- :mod:`~search.selection.tree`: a small decision tree that prints as rules;
- :mod:`~search.selection.predictor`: the gradient-boosted and tree selectors, the
  fixed heuristics and the metrics (accuracy, balanced accuracy, speedup over the oracle);
- :mod:`~search.selection.first_config`: a configuration to measure first (nearest layer);
- :mod:`~search.selection.select`: one layer's selection with its evidence;
- :mod:`~search.selection.report`: the network report (table, PNG plots, HTML).
"""
