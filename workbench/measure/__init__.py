"""The measuring kernel every experiment stands on, whichever area it measures.

`bench`, `topics` and `streaming` all measure, and all of them import these modules;
none of them imports another sideways for them, so the subpackage graph stays acyclic
(`tests/unit/test_import_graph.py`):

- `contract`: the one result row (`result_row`), its standard metrics and its checks;
- `resources`: CPU seconds and peak RSS of the stack's processes (`ResourceMonitor`);
- `drift`: run order that cancels a drifting system (`run_order`) and the test that marks drift;
- `sampling`: a background sampler's lifecycle (`Sampler`: the meter, the lag sampler, the resource monitor);
- `failures`: failed records by cause (`FailureTally`) and the notebook check that names them (`check_delivered`);
- `hops`: a record's path in stamps, and the hops between them (the waterfall's arithmetic);
- `latency`: latency samples summarised as the p50/p95/p99/max columns;
- `timeline`: throughput over time, readings turned into rates;
- `schedule`: an open-loop schedule of offered rates by phase, and its slips (`run_open_loop`);
- `lag`: consumer lag over time (`LagSampler`) and a burst's baseline, peak and time to clear.

The public names are re-exported by `workbench.bench`, the toolkit notebooks use; this
package's own surface is its modules.
"""

__all__: list[str] = []
