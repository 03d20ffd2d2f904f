"""The one way the pvbatch benchmarks time a pipeline update under MPI."""
import time


def timed_update(proxy, ctl):
    """Seconds of proxy.UpdatePipeline() between barriers (so from the ranks'
    common start to the slowest rank's end); ctl may be None (serial)."""
    return timed_update_per_rank(proxy, ctl)[0]


def timed_update_per_rank(proxy, ctl):
    """(seconds from the common start to the slowest rank's end, seconds to
    this rank's own end): their difference is this rank's wait for others."""
    if ctl:
        ctl.Barrier()
    t0 = time.perf_counter()
    proxy.UpdatePipeline()
    own = time.perf_counter() - t0
    if ctl:
        ctl.Barrier()
    return time.perf_counter() - t0, own
