"""Deterministic benchmark datasets (shared by the benchmark and calibration scripts).

    uniform   N rows x 8 fields: ints, floats, bools, short and long strings, ISO dates,
              ~1% strings that need quotes (a comma, a leading '-', 'true')
    orders    nested customer object + 1-5 line items (arrays inside records)
    events    semi-uniform logs: half carry a nested error object
    config    a deep configuration document (nested objects, small arrays)
"""

from __future__ import annotations

import random
from typing import Any

CITIES = ["Berlin", "Oslo", "Lisbon", "Kraków", "Zürich", "São Paulo", "Tokyo", "Austin", "Nairobi", "Lima"]
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma tau upsilon omega".split()
ODD = ["Smith, John", "-pending", "true", "a:b", "  padded", "#tag"]


def uniform(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        name = rnd.choice(ODD) if rnd.random() < 0.01 else f"user_{rnd.randint(1, 10**6)}"
        rows.append(
            {
                "id": i,
                "name": name,
                "score": round(rnd.uniform(0, 1000), 3),
                "active": rnd.random() < 0.7,
                "city": rnd.choice(CITIES),
                "joined": f"20{rnd.randint(10, 24)}-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}",
                "visits": rnd.randint(0, 5000),
                "bio": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 12))),
            }
        )
    return rows


def orders(n: int, seed: int = 2) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        items = [
            {"sku": f"SKU-{rnd.randint(100, 999)}", "qty": rnd.randint(1, 4), "price": round(rnd.uniform(1, 300), 2)}
            for _ in range(rnd.randint(1, 5))
        ]
        out.append(
            {
                "order_id": 100000 + i,
                "placed": f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:00:00Z",
                "customer": {"name": f"Customer {rnd.randint(1, 5000)}", "city": rnd.choice(CITIES), "vip": rnd.random() < 0.1},
                "items": items,
                "total": round(sum(it["qty"] * it["price"] for it in items), 2),
            }
        )
    return out


def events(n: int, seed: int = 3) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        ev: dict[str, Any] = {
            "ts": f"2024-05-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}Z",
            "level": rnd.choice(["info", "warn", "error", "debug"]),
            "service": rnd.choice(["api", "auth", "billing", "search"]),
            "msg": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 8))),
            "latency_ms": rnd.randint(1, 2000),
        }
        if i % 2:
            ev["error"] = {"code": rnd.choice(["E_TIMEOUT", "E_AUTH", "E_IO"]), "retry": rnd.random() < 0.5}
        out.append(ev)
    return out


def config(n: int, seed: int = 4) -> dict[str, Any]:
    rnd = random.Random(seed)

    def section(depth: int) -> dict[str, Any]:
        d: dict[str, Any] = {
            "enabled": rnd.random() < 0.5,
            "timeout_s": rnd.randint(1, 120),
            "name": rnd.choice(WORDS),
            "tags": [rnd.choice(WORDS) for _ in range(rnd.randint(1, 4))],
        }
        if depth < 4:
            for k in range(2):
                d[f"{rnd.choice(WORDS)}_{k}"] = section(depth + 1)
        return d

    return {f"service_{i}": section(0) for i in range(max(1, n // 50))}


DATASETS = {"uniform": uniform, "orders": orders, "events": events, "config": config}
