"""The one way the pvbatch benchmarks time a pipeline update under MPI."""
import time


def timed_update(proxy, ctl):
    """Seconds of proxy.UpdatePipeline() between barriers (so from the ranks'
    common start to the slowest rank's end); ctl may be None (serial)."""
    if ctl:
        ctl.Barrier()
    t0 = time.perf_counter()
    proxy.UpdatePipeline()
    if ctl:
        ctl.Barrier()
    return time.perf_counter() - t0
