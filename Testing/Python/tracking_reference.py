"""An independent halo tracker for the HaloTracking tests: numpy and plain
dicts, written from the rules of doc/filters/HaloTracking.md (no code shared
with the kernels). Plain Python and numpy only.

steps: a list of (ids, groups, masses) per time step, members only (groups
>= 0). Returns the merger tree as a dict of columns named as the filter's
table, rows sorted by (TimeStep, GroupId).
"""
import numpy as np

COLUMNS = ("TimeStep", "GroupId", "TrackId", "Count", "Mass", "DescendantGroupId",
           "SharedWithDescendant", "IsMainProgenitor")


def reference_tree(steps, minimum_shared=1):
    rows = {}  # (step, group) -> row dict
    for s, (ids, groups, masses) in enumerate(steps):
        for g in np.unique(groups):
            inside = groups == g
            rows[(s, int(g))] = dict(TimeStep=s, GroupId=int(g), TrackId=-1,
                                     Count=int(inside.sum()), Mass=float(masses[inside].sum()),
                                     DescendantGroupId=-1, SharedWithDescendant=0,
                                     IsMainProgenitor=0)
    progenitor = {}
    for s in range(len(steps) - 1):
        ids_a, groups_a, _ = steps[s]
        ids_b, groups_b, _ = steps[s + 1]
        group_of_b = dict(zip(ids_b.tolist(), groups_b.tolist()))
        shared = {}
        for i, a in zip(ids_a.tolist(), groups_a.tolist()):
            b = group_of_b.get(i)
            if b is not None:
                shared[(a, b)] = shared.get((a, b), 0) + 1
        for (a, b), n in sorted(shared.items()):
            row = rows[(s, a)]
            better = n > row["SharedWithDescendant"] or \
                (n == row["SharedWithDescendant"] and b < row["DescendantGroupId"])
            if n >= minimum_shared and better:
                row["DescendantGroupId"], row["SharedWithDescendant"] = b, n
        for (step, a), row in sorted(rows.items()):
            if step != s or row["DescendantGroupId"] < 0:
                continue
            key = (s + 1, row["DescendantGroupId"])
            best = progenitor.get(key)
            if best is None or (row["SharedWithDescendant"], row["Count"], -a) > \
                    (best["SharedWithDescendant"], best["Count"], -best["GroupId"]):
                progenitor[key] = row
        for key, row in progenitor.items():
            if key[0] == s + 1:
                row["IsMainProgenitor"] = 1
    next_track = 0
    for key in sorted(rows):
        main = progenitor.get(key)
        if main is None:
            rows[key]["TrackId"] = next_track
            next_track += 1
        else:
            rows[key]["TrackId"] = main["TrackId"]
    ordered = [rows[k] for k in sorted(rows)]
    return {c: np.array([r[c] for r in ordered], dtype=np.float64 if c == "Mass" else np.int64)
            for c in COLUMNS}
