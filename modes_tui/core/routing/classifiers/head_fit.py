"""Fitting a head's weights: multinomial logistic regression (L-BFGS in numpy) and a
shrinkage-LDA (Mahalanobis) discriminant, both giving `z = q W + b`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float64]
    Labels = npt.NDArray[np.int64]

L2 = 3e-4
"""The logistic head's penalty per unit of mean NLL: of 1e-4, 3e-4, 1e-3, 3e-3 and 1e-2, the
best on dev slices of banking77's and snips' train splits (in-scope accuracy, and in-scope
accuracy at 80% out-of-scope recall), never on their test rows."""
MEMORY = 10
ITERATIONS = 200


def softmax(z: Matrix) -> Matrix:
    """Per row, the softmax of `z`."""
    shifted = np.exp(z - z.max(axis=1, keepdims=True))
    result: Matrix = shifted / shifted.sum(axis=1, keepdims=True)
    return result


def _lbfgs(loss: Any, x0: Matrix, iterations: int) -> Matrix:
    """Minimise a smooth convex `loss(x) -> (value, gradient)` (limited-memory BFGS)."""
    x = x0.copy()
    value, grad = loss(x)
    steps: list[tuple[Matrix, Matrix, float]] = []
    for _ in range(iterations):
        q = grad.copy()
        alphas = []
        for s, y, rho in reversed(steps):
            a = rho * float(s @ q)
            alphas.append(a)
            q -= a * y
        if steps:
            s, y, _ = steps[-1]
            q *= float(s @ y) / max(float(y @ y), 1e-12)
        for (s, y, rho), a in zip(steps, reversed(alphas), strict=True):
            q += s * (a - rho * float(y @ q))
        direction = -q
        slope = float(grad @ direction)
        if slope >= 0:
            direction, slope = -grad, -float(grad @ grad)
        step = 1.0
        for _ in range(30):
            candidate = x + step * direction
            new_value, new_grad = loss(candidate)
            if new_value <= value + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            break
        s, y = candidate - x, new_grad - grad
        sy = float(s @ y)
        if sy > 1e-12:
            steps.append((s, y, 1.0 / sy))
            if len(steps) > MEMORY:
                steps.pop(0)
        x, grad = candidate, new_grad
        improvement = value - new_value
        value = new_value
        if improvement < 1e-9 * max(1.0, abs(value)) or float(np.abs(grad).max()) < 1e-6:
            break
    return x


def fit_logistic(
    vectors: Matrix,
    labels: Labels,
    classes: int,
    l2: float | None = None,
    weights: Any = None,
    balance: int | None = None,
) -> tuple[Matrix, Matrix]:
    """Multinomial logistic regression, L2-penalised: (W (d, classes), b (classes,)).

    Labels are 0..classes-1; `weights` per row (default 1), the total weight of each of the
    first `balance` classes (default all) made equal, so that a mode with many corrections
    does not drown the others.
    """
    l2 = L2 if l2 is None else l2
    x = np.asarray(vectors, dtype=np.float64)
    n, d = x.shape
    onehot = np.zeros((n, classes))
    onehot[np.arange(n), labels] = 1.0
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    balanced = classes if balance is None else balance
    per_class = onehot.T @ w
    present = per_class > 0
    present[balanced:] = False
    mode_weight = float(per_class[:balanced].sum())
    if mode_weight > 0:
        factor = mode_weight / (present.sum() * np.maximum(per_class, 1e-12))
        # Classes past `balance` (the negatives) keep one row's weight per row: a handful of
        # corrections to the fallback must not weigh as much as a whole mode.
        factor[balanced:] = mode_weight / max(float(w[labels < balanced].sum()), 1e-12)
    else:  # only negatives to learn from: nothing to balance
        factor = np.ones(classes)
    w = w * factor[labels]
    w = w / w.sum()

    def loss(theta: Matrix) -> tuple[float, Matrix]:
        weights_, bias = theta[: d * classes].reshape(d, classes), theta[d * classes :]
        z = x @ weights_ + bias
        z -= z.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(z).sum(axis=1))
        nll = float(w @ (log_norm - (z * onehot).sum(axis=1)))
        residual = (np.exp(z - log_norm[:, None]) - onehot) * w[:, None]
        grad_w = x.T @ residual + l2 * weights_
        value = nll + 0.5 * l2 * float((weights_**2).sum())
        return value, np.concatenate([grad_w.ravel(), residual.sum(axis=0)])

    theta = _lbfgs(loss, np.zeros(d * classes + classes), ITERATIONS)
    return theta[: d * classes].reshape(d, classes), theta[d * classes :]


def fit_mahalanobis(vectors: Matrix, labels: Labels, classes: int) -> tuple[Matrix, Matrix]:
    """Linear discriminant with a shrunk shared covariance (Ledoit-Wolf): (W, b) such that
    `q W + b = -0.5 * Mahalanobis(q, mean_m)^2 + const(q)` per class."""
    x = np.asarray(vectors, dtype=np.float64)
    d = x.shape[1]
    means = np.stack(
        [
            x[labels == c].mean(axis=0) if (labels == c).any() else np.zeros(d)
            for c in range(classes)
        ]
    )
    centred = x - means[labels]
    n = len(x)
    sample = centred.T @ centred / max(n, 1)
    mu = float(np.trace(sample)) / d
    # Ledoit-Wolf: shrink towards mu * I by the estimated share of noise in the sample.
    spread = float(((centred**2).sum(axis=1) ** 2).sum()) / max(n, 1) ** 2
    spread -= float((sample**2).sum()) / max(n, 1)
    distance = float(((sample - mu * np.eye(d)) ** 2).sum())
    shrink = min(1.0, max(0.0, spread / max(distance, 1e-12)))
    covariance = (1 - shrink) * sample + shrink * mu * np.eye(d)
    precision = np.linalg.inv(covariance)
    weights = precision @ means.T
    bias = -0.5 * np.einsum("cd,dc->c", means, weights)
    return weights, bias
