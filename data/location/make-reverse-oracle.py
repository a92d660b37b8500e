#!/usr/bin/env python3
"""Writes the reverse-lookup oracle the provider tests check the k-d tree against: random points
(uniform on the sphere, fixed seed) and the id of the nearest place in cities15000.tsv by brute-force
haversine distance.

    python3 data/location/make-reverse-oracle.py > data/location/reverse-oracle.tsv
"""
import math
import os
import random

here = os.path.dirname(os.path.abspath(__file__))
places = []
for line in open(os.path.join(here, "cities15000.tsv"), encoding="utf-8"):
    if line.startswith("#"):
        continue
    cols = line.rstrip("\n").split("\t")
    places.append((cols[0], math.radians(float(cols[3])), math.radians(float(cols[4]))))

rng = random.Random(5870)
print("# latitude\tlongitude\tnearest geonameid\tdistance km (haversine, R = 6371.0088)")
for _ in range(150):
    lat = math.degrees(math.asin(2 * rng.random() - 1))
    lon = rng.random() * 360 - 180
    phi, lam = math.radians(lat), math.radians(lon)
    best = None
    for pid, p_phi, p_lam in places:
        h = math.sin((p_phi - phi) / 2) ** 2 + math.cos(phi) * math.cos(p_phi) * math.sin((p_lam - lam) / 2) ** 2
        if best is None or h < best[0]:
            best = (h, pid)
    km = 2 * 6371.0088 * math.asin(math.sqrt(best[0]))
    print(f"{lat:.5f}\t{lon:.5f}\t{best[1]}\t{km:.3f}")
