"""Independent references for the EuclideanMST and HDBSCAN tests (numpy and
scipy only; no code shared with the kernels).

- scipy_emst: Delaunay edges + csgraph.minimum_spanning_tree (open boxes).
- brute_mst: Prim on the complete graph under the total order
  (weight^2, smaller id, larger id), Euclidean or mutual reachability, open
  or periodic: the unique minimum under that order, ties included.
- hdbscan_star: HDBSCAN* from the definitions of Campello, Moulavi, Zimek and
  Sander (2015): clusters of the MST levels, stability, excess of mass or
  leaf selection, membership probabilities and GLOSH scores.
"""
import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.spatial import Delaunay


def wrapped(points, box):
    lo = np.array(box[0::2], dtype=np.float64)
    length = np.array(box[1::2], dtype=np.float64) - lo
    w = lo + np.mod(points.astype(np.float64) - lo, length)
    return np.where(w >= lo + length, lo, w), length


def squared_distances(points, box=None):
    """All pairwise squared distances in double (nearest image when periodic)."""
    p = points.astype(np.float64)
    length = None
    if box is not None:
        p, length = wrapped(points, box)
        # the tree wraps in the points' own precision
        p = p.astype(points.dtype).astype(np.float64)
    d2 = np.zeros((len(p), len(p)))
    for k in range(3):
        s = np.abs(p[:, None, k] - p[None, :, k])
        if length is not None:
            s = np.where(s > 0.5 * length[k], length[k] - s, s)
        d2 += s * s
    return d2


def core_distances2(d2, min_samples):
    """Squared distance to the min_samples-th nearest OTHER point."""
    return np.sort(d2, axis=1)[:, min_samples]


def mutual_reachability2(d2, core2):
    return np.maximum(d2, np.maximum(core2[:, None], core2[None, :]))


def brute_mst(w2, ids=None):
    """Prim under (w2, smaller id, larger id); sorted list of (w2, lo, hi)."""
    n = len(w2)
    ids = np.arange(n) if ids is None else np.asarray(ids)
    in_tree = np.zeros(n, bool)
    in_tree[0] = True
    best_w = w2[0].copy()
    best_from = np.zeros(n, int)
    edges = []
    for _ in range(n - 1):
        cand = np.where(~in_tree)[0]
        lo = np.minimum(ids[cand], ids[best_from[cand]])
        hi = np.maximum(ids[cand], ids[best_from[cand]])
        j = cand[np.lexsort((hi, lo, best_w[cand]))[0]]
        edges.append((best_w[j], min(ids[j], ids[best_from[j]]), max(ids[j], ids[best_from[j]])))
        in_tree[j] = True
        # ties: keep the better (smaller lo, hi) source
        new_w = w2[j]
        nlo = np.minimum(ids, ids[j])
        nhi = np.maximum(ids, ids[j])
        olo = np.minimum(ids, ids[best_from])
        ohi = np.maximum(ids, ids[best_from])
        better = (new_w < best_w) | ((new_w == best_w) & ((nlo < olo) | ((nlo == olo) & (nhi < ohi))))
        better &= ~in_tree
        best_w = np.where(better, new_w, best_w)
        best_from = np.where(better, j, best_from)
    return sorted(edges)


def scipy_emst(points):
    """Total weight and edge set (frozensets) of scipy's Delaunay + MST."""
    p = points.astype(np.float64)
    tri = Delaunay(p)
    s = tri.simplices
    pairs = np.concatenate([s[:, [a, b]] for a in range(4) for b in range(a + 1, 4)])
    pairs = np.unique(np.sort(pairs, axis=1), axis=0)
    w = np.sqrt(((p[pairs[:, 0]] - p[pairs[:, 1]]) ** 2).sum(axis=1))
    g = coo_matrix((w, (pairs[:, 0], pairs[:, 1])), shape=(len(p), len(p)))
    t = minimum_spanning_tree(g).tocoo()
    return t.data.sum(), {(min(a, b), max(a, b)) for a, b in zip(t.row, t.col)}


def hdbscan_star(points, min_cluster_size, min_samples, method="eom"):
    """(labels, clusters as frozensets of members, probability, glosh,
    leaf_point) from the definitions. Clusters: connected components of the
    MST with edges of weight < eps, followed as eps decreases (one edge at a
    time, heaviest first; equal weights in reverse tie order); a component with fewer
    than min_cluster_size points is noise from then on (its points fall out
    at lambda = 1 / eps); a cluster whose component splits into two or more
    large parts ends there and the parts are new clusters."""
    n = len(points)
    d2 = squared_distances(points)
    core2 = core_distances2(d2, min_samples)
    mst = brute_mst(mutual_reachability2(d2, core2))
    w = np.sqrt(np.array([e[0] for e in mst]))
    ends = np.array([(e[1], e[2]) for e in mst])
    # One edge at a time, heaviest first (equal weights: the later edge of
    # the tie order first, as the library's hierarchy splits them).
    # cluster records
    members = [np.arange(n)]
    parent = [-1]
    birth = [0.0]
    fall = np.full(n, np.inf)         # lambda at which the point leaves its last cluster
    last = np.zeros(n, int)           # the last cluster a point belonged to
    death = [0.0]                     # largest lambda of a cluster's direct events
    alive = {0: np.arange(n)}
    keep = np.ones(len(w), bool)
    for e in range(len(w) - 1, -1, -1):
        eps = w[e]
        lam = 1.0 / eps if eps > 0 else np.inf
        keep[e] = False
        a = ends[e, 0]
        g = coo_matrix((np.ones(keep.sum()), (ends[keep, 0], ends[keep, 1])), shape=(n, n))
        _, comp = connected_components(g, directed=False)
        for c, pts in list(alive.items()):
            if a not in set(pts):
                continue  # only the cluster that holds the edge changes
            parts = {}
            for p in pts:
                parts.setdefault(comp[p], []).append(p)
            big = [np.array(v) for v in parts.values() if len(v) >= min_cluster_size]
            small = [p for v in parts.values() if len(v) < min_cluster_size for p in v]
            for p in small:
                fall[p] = lam
                last[p] = c
            if small:
                death[c] = max(death[c], lam)
            if len(big) == 1:
                alive[c] = big[0]
                continue
            del alive[c]
            if len(big) >= 2:
                death[c] = max(death[c], lam)
                for b in big:
                    members.append(b)
                    parent.append(c)
                    birth.append(lam)
                    death.append(0.0)
                    alive[len(members) - 1] = b
                    last[b] = len(members) - 1
    m = len(members)
    children = [[k for k in range(m) if parent[k] == c] for c in range(m)]
    # stability: sum over members of (lambda at which they leave c) - birth
    stability = np.zeros(m)
    for c in range(m):
        for p in members[c]:
            leave = fall[p] if last[p] == c else min(
                birth[k] for k in children[c] if p in set(members[k]))
            stability[c] += leave - birth[c]
    selected = np.zeros(m, bool)
    if method == "leaf":
        if m > 1:
            selected[1:] = [len(children[c]) == 0 for c in range(1, m)]
    else:
        total = stability.copy()
        for c in range(m - 1, 0, -1):  # children have larger numbers
            sub = sum(total[k] for k in children[c])
            if sub > stability[c]:
                total[c] = sub
            else:
                selected[c] = True
                stack = list(children[c])
                while stack:
                    k = stack.pop()
                    selected[k] = False
                    stack.extend(children[k])
    label = np.full(n, -1)
    for c in range(m):
        if selected[c]:
            label[members[c]] = c
    prob = np.zeros(n)
    for p in range(n):
        c = label[p]
        if c >= 0:
            prob[p] = 1.0 if death[c] == 0 or not np.isfinite(fall[p]) else min(fall[p], death[c]) / death[c]
    glosh = np.zeros(n)
    for p in range(n):
        d = death[last[p]]
        glosh[p] = 0.0 if d == 0 or not np.isfinite(fall[p]) else (d - fall[p]) / d
    clusters = {frozenset(np.where(label == c)[0]) for c in range(m) if selected[c]}
    leaf_point = np.array([len(children[last[p]]) == 0 for p in range(n)])
    return label, clusters, prob, glosh, leaf_point
