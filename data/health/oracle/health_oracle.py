#!/usr/bin/env python3
"""Independent per-day aggregates of an Apple Health export.xml, as a test oracle.

Uses Python's own XML parser (xml.etree.iterparse), not the provider's scanner, and the rules in
docs/providers/health-metric.md: days are the local date written in startDate; sums and sleep take
the source with the largest daily total; averages pool every sample (with min and max); sleep
counts asleep stages, a night belonging to the day it ends (an interval ending at 18:00 or later
counts for the next day); Records inside a Correlation are skipped.

    python3 data/health/oracle/health_oracle.py data/health/export.xml > data/health/oracle/export-daily.csv

Output: metric,date,value,min,max,count in base units (count, km, kcal, bpm, kg, hours).
"""
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import datetime, timedelta

TYPES = {
    "HKQuantityTypeIdentifierStepCount": ("steps", "sum"),
    "HKQuantityTypeIdentifierDistanceWalkingRunning": ("distance", "sum"),
    "HKQuantityTypeIdentifierActiveEnergyBurned": ("activeEnergy", "sum"),
    "HKQuantityTypeIdentifierFlightsClimbed": ("flightsClimbed", "sum"),
    "HKQuantityTypeIdentifierHeartRate": ("heartRate", "average"),
    "HKQuantityTypeIdentifierRestingHeartRate": ("restingHeartRate", "average"),
    "HKQuantityTypeIdentifierBodyMass": ("bodyMass", "average"),
    "HKCategoryTypeIdentifierSleepAnalysis": ("sleep", "sleep"),
}
FACTORS = {
    "count": 1, "km": 1, "mi": 1.609344, "m": 0.001, "kcal": 1, "Cal": 1, "kJ": 1 / 4.184,
    "kg": 1, "lb": 0.45359237, "g": 0.001, "count/min": 1,
}
ASLEEP = {"Asleep", "AsleepCore", "AsleepDeep", "AsleepREM", "AsleepUnspecified"}


def parse(stamp):
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S %z")


def main(path):
    per_source = defaultdict(float)        # (metric, day, source) -> sum
    per_source_count = defaultdict(int)
    samples = defaultdict(list)            # (metric, day) -> values (averages)
    kinds = {}
    depth = 0
    for event, element in ET.iterparse(path, events=("start", "end")):
        if element.tag == "Correlation":
            depth += 1 if event == "start" else -1
            continue
        if event != "end" or element.tag != "Record" or depth:
            if event == "end":
                element.clear()
            continue
        attributes = element.attrib
        entry = TYPES.get(attributes.get("type"))
        if entry:
            metric, kind = entry
            kinds[metric] = kind
            source = attributes.get("sourceName", "")
            if kind == "sleep":
                value = attributes["value"].replace("HKCategoryValueSleepAnalysis", "")
                if value in ASLEEP:
                    start, end = parse(attributes["startDate"]), parse(attributes["endDate"])
                    night = end.date() + timedelta(days=1 if end.hour >= 18 else 0)
                    key = (metric, night.isoformat(), source)
                    per_source[key] += (end - start).total_seconds() / 3600
                    per_source_count[key] += 1
            else:
                value = float(attributes["value"]) * FACTORS[attributes.get("unit", "count")]
                day = attributes["startDate"][:10]
                if kind == "sum":
                    per_source[(metric, day, source)] += value
                    per_source_count[(metric, day, source)] += 1
                else:
                    samples[(metric, day)].append(value)
        element.clear()
    rows = {}
    for (metric, day, source), total in per_source.items():
        best = rows.get((metric, day))
        if best is None or total > best[0]:
            rows[(metric, day)] = (total, total, total, per_source_count[(metric, day, source)])
    for (metric, day), values in samples.items():
        rows[(metric, day)] = (sum(values) / len(values), min(values), max(values), len(values))
    print("metric,date,value,min,max,count")
    for (metric, day) in sorted(rows):
        value, low, high, count = rows[(metric, day)]
        print(f"{metric},{day},{value:.6f},{low:.6f},{high:.6f},{count}")


if __name__ == "__main__":
    main(sys.argv[1])
