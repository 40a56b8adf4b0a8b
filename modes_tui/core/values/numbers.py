"""How a router's probability or confidence is written for people: two decimals, at most 0.99."""

from __future__ import annotations


def two_places(value: float) -> str:
    """`value` with two decimals, at most "0.99": a 0.996, or a softmax that saturated to
    exactly 1.0 in floating point, shows as 0.99, so no screen, line or reason claims a
    certainty a router cannot have."""
    return f"{min(value, 0.99):.2f}"


def rounded_probabilities(probabilities: dict[str, float]) -> dict[str, float]:
    """Probabilities rounded for display to four places, still summing to 1 (the largest
    absorbs the rest)."""
    rounded = {name: round(p, 4) for name, p in probabilities.items()}
    if rounded:
        top = max(rounded, key=lambda n: rounded[n])
        rounded[top] = round(min(1.0, max(0.0, rounded[top] + 1.0 - sum(rounded.values()))), 6)
    return rounded
