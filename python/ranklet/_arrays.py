"""Inputs as the extension takes them: features as a float32/float64 array
(any memory order, not copied) or the three arrays of a CSR matrix, query ids
as integer codes, pairs as a float array. The checks of the values themselves
(finite, in range) are the library's, with the CLI's messages."""

import numpy as np


def is_sparse(X):
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def features(X):
    """``(x, csr)`` for the extension: a 2-D float array and ``None``, or the
    CSR data array and ``(n_features, indptr, indices)``."""
    if is_sparse(X):
        X = X.tocsr()
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        csr = (
            int(X.shape[1]),
            np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int64),
        )
        return np.ascontiguousarray(X.data, dtype=np.float64), csr
    return matrix(X), None


def matrix(X, name="X", shape="rows × features"):
    """``X`` as a 2-D float32/float64 array (not copied when it is one):
    ``TypeError`` naming ``name`` for values that are not numbers,
    ``ValueError`` for another number of dimensions than the two of
    ``shape``."""
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers, got dtype {X.dtype}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D ({shape}), got {X.ndim} dimensions")
    return X


def qid_codes(qid, n):
    """Integer codes of the query ids (any hashable values in an array-like),
    or ``None``. The library groups rows by first appearance of a code, as the
    readers group them by first appearance of a ``qid:``."""
    if qid is None:
        return None
    q = np.asarray(qid)
    if q.ndim != 1:
        raise ValueError(f"qid must be 1-D, got {q.ndim} dimensions")
    if len(q) != n:
        raise ValueError(f"X has {n} rows, qid has {len(q)} values")
    if q.dtype.kind in "iu":
        return np.ascontiguousarray(q, dtype=np.int64)
    _, codes = np.unique(q, return_inverse=True)
    return np.ascontiguousarray(codes.reshape(-1), dtype=np.int64)


def pairs_array(pairs):
    if pairs is None:
        return None
    p = np.asarray(pairs, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"pairs must be an (m, 2) array of (winner, loser) rows, got {p.ndim} dimensions")
    return np.ascontiguousarray(p)
