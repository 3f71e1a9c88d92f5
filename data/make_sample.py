"""Regenerate data/sample.jsonl (deterministic): python data/make_sample.py"""

import json
import random
from pathlib import Path

rnd = random.Random(42)
CITIES = ["Berlin", "Oslo", "Lisbon", "Kraków", "Zürich", "São Paulo", "Tokyo", "Austin"]
PRODUCTS = ["keyboard", "monitor", "cable, USB-C", "desk lamp", "chair", "notebook", "pen: gel", "headset"]

with open(Path(__file__).with_name("sample.jsonl"), "w", encoding="utf-8") as f:
    for i in range(1, 2001):
        rec = {
            "order_id": 100000 + i,
            "placed": f"2024-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:00Z",
            "customer": {"name": f"Customer {rnd.randint(1, 500)}", "city": rnd.choice(CITIES)},
            "product": rnd.choice(PRODUCTS),
            "qty": rnd.randint(1, 5),
            "unit_price": round(rnd.uniform(2, 400), 2),
            "paid": rnd.random() < 0.9,
        }
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
