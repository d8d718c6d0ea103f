#!/usr/bin/env python3
"""Writes large.json: a view of 1,000 body components cycling through every shipped component (and a fallback),
with a header and an overlay. Deterministic: run it again and the file is identical.

    python3 examples/generate-large.py [COUNT] > examples/large.json
"""
import json
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
kinds = [
    ("demo:row", "row"), ("demo:card", "card"), ("demo:card", "card"), ("cdemo:tile", "card"),
    ("cdemo:badge", "row"), ("cdemo:banner", "banner"), ("demo:image", "card"), ("nowhere:thing", "row"),
]
colors = ["#1DB954", "#007AFF", "#FF9500", "#AF52DE", "#FF3B30"]
body = []
for i in range(count):
    component, category = kinds[i % len(kinds)]
    item = {"id": f"item-{i}", "component": {"id": component, "category": category},
            "text": {"title": f"Item {i}"}}
    if i % 3 == 0:
        item["text"]["subtitle"] = f"Subtitle {i}"
    if i % 5 == 0:
        item["custom"] = {"color": colors[i % len(colors)]}
    if component == "demo:image" and i % 16 == 6:
        item["images"] = {"main": {"uri": "assets/cover.png"}}
    body.append(item)
view = {
    "id": "large",
    "title": f"{count} components",
    "header": {"component": {"id": "demo:header"}, "text": {"title": f"{count} components"}, "custom": {"height": 180}},
    "body": body,
    "overlays": [{"id": "count", "component": {"id": "cdemo:badge"}, "text": {"title": f"{count} items"}}],
}
json.dump(view, sys.stdout, indent=1, sort_keys=False)
sys.stdout.write("\n")
