#!/usr/bin/env python3
"""Writes the Stock Quote provider's SYNTHETIC sample data (see README.md in this folder).

The prices are random walks from a fixed seed: they are not real market data and belong to
fictional companies. Run from anywhere; the output always lands next to this script:

    python3 data/stock-quote/make-samples.py

Writes quotes/*.csv|*.txt in the Yahoo and Stooq column spellings, symbols.csv, and oracle.json
(expected statistics computed here, independently of the Swift provider, for its tests).
"""
import datetime as dt
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
QUOTES = os.path.join(HERE, "quotes")
SEED = 20261120
FIRST = dt.date(2021, 11, 22)
LAST = dt.date(2026, 11, 20)  # the as-of date of every sample file

# symbol, name, exchange, currency, file name, format, start price, drift/yr, volatility/yr, volume
SYMBOLS = [
    ("ACME", "Acme Corporation", "NYSE", "USD", "ACME.csv", "yahoo", 142.0, 0.09, 0.24, 6_200_000),
    ("GLBX", "Globex Corporation", "NASDAQ", "USD", "glbx.us.txt", "stooq-bulk", 58.0, 0.14, 0.38, 11_500_000),
    ("INTK", "Initech Inc.", "NASDAQ", "USD", "INTK.csv", "stooq", 23.5, -0.03, 0.31, 3_100_000),
    ("UMBR.DE", "Umbrella Holdings AG", "XETRA", "EUR", "umbr.de.txt", "stooq-bulk", 87.0, 0.05, 0.22, 1_400_000),
    ("HOOL", "Hooli, Inc.", "NASDAQ", "USD", "HOOL.csv", "yahoo-split", 410.0, 0.18, 0.34, 4_800_000),
    ("STRK", "Stark Industries", "NYSE", "USD", "strk.csv", "stooq-lower", 201.0, 0.11, 0.27, 2_700_000),
]
# Listed in symbols.csv but without a local file: only the HTTP source can serve it.
HTTP_ONLY = [("WAYN", "Wayne Enterprises", "NYSE", "USD")]
HOOL_SPLIT = (dt.date(2024, 6, 10), 4)  # a 4-for-1 split, recorded in Adj Close only
RANGES = {"1M": 1, "3M": 3, "1Y": 12, "5Y": 60}


def trading_days():
    day = FIRST
    while day <= LAST:
        fixed_holiday = (day.month, day.day) in {(1, 1), (7, 4), (12, 25)}
        if day.weekday() < 5 and not fixed_holiday:
            yield day
        day += dt.timedelta(days=1)


def months_back(day, months):
    month_index = day.year * 12 + (day.month - 1) - months
    year, month = divmod(month_index, 12)
    month += 1
    last_day = [31, 29 if (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)) else 28, 31, 30, 31, 30,
                31, 31, 30, 31, 30, 31][month - 1]
    return dt.date(year, month, min(day.day, last_day))


def simulate(rng, start, drift, vol, volume, days):
    rows = []
    close = start
    dt_year = 1 / 252
    for day in days:
        previous = close
        shock = rng.gauss(0, 1)
        close = previous * math.exp((drift - vol * vol / 2) * dt_year + vol * math.sqrt(dt_year) * shock)
        gap = rng.gauss(0, vol * math.sqrt(dt_year) / 3)
        open_ = previous * math.exp(gap)
        high = max(open_, close) * (1 + abs(rng.gauss(0, vol * math.sqrt(dt_year) / 2)))
        low = min(open_, close) * (1 - abs(rng.gauss(0, vol * math.sqrt(dt_year) / 2)))
        day_volume = int(volume * math.exp(rng.gauss(0, 0.35) + 1.5 * abs(shock) * vol))
        rows.append([day, round(open_, 2), round(high, 2), round(low, 2), round(close, 2), day_volume])
    return rows


def adjusted_closes(rows, dividend_yield):
    """Adj Close as Yahoo computes it: each quarterly dividend scales every earlier close."""
    factor = 1.0
    adjusted = [0.0] * len(rows)
    for index in range(len(rows) - 1, -1, -1):
        adjusted[index] = round(rows[index][4] * factor, 6)
        day = rows[index][0]
        if index > 0 and day.month in (2, 5, 8, 11) and rows[index - 1][0].month != day.month:
            dividend = rows[index - 1][4] * dividend_yield / 4
            factor *= 1 - dividend / rows[index - 1][4]
    return adjusted


def write(name, header, lines):
    with open(os.path.join(QUOTES, name), "w", newline="") as handle:
        handle.write(header + "\n")
        for line in lines:
            handle.write(line + "\n")


def fmt(value):
    return f"{value:.2f}"


def statistics(rows):
    """rows: [date, open, high, low, close, volume], split-adjusted, ascending."""
    as_of = rows[-1][0]
    last, previous = rows[-1], rows[-2]
    change = last[4] - previous[4]
    result = {
        "asOf": as_of.isoformat(),
        "open": last[1], "high": last[2], "low": last[3], "close": last[4], "volume": last[5],
        "previousClose": previous[4], "previousDate": previous[0].isoformat(),
        "change": round(change, 6), "changePercent": round(change / previous[4] * 100, 6),
        "sparkline": [row[4] for row in rows[-30:]],
        "ranges": {},
    }
    for name, months in RANGES.items():
        start = months_back(as_of, months)
        window = [row for row in rows if row[0] >= start]
        result["ranges"][name] = {
            "start": window[0][0].isoformat(), "count": len(window),
            "startClose": window[0][4], "endClose": window[-1][4],
            "high": max(row[2] for row in window), "low": min(row[3] for row in window),
            "averageVolume": round(sum(row[5] for row in window) / len(window)),
        }
    result["week52High"] = result["ranges"]["1Y"]["high"]
    result["week52Low"] = result["ranges"]["1Y"]["low"]
    return result


def main():
    os.makedirs(QUOTES, exist_ok=True)
    rng = random.Random(SEED)
    days = list(trading_days())
    oracle = {}
    for symbol, name, exchange, currency, file_name, style, start, drift, vol, volume in SYMBOLS:
        rows = simulate(rng, start, drift, vol, volume, days)
        stats_rows = [list(row) for row in rows]
        if style in ("yahoo", "yahoo-split"):
            adjusted = adjusted_closes(rows, 0.012 if style == "yahoo" else 0.004)
            if style == "yahoo-split":
                split_day, ratio = HOOL_SPLIT
                # Raw (unadjusted) prices before the split are `ratio` times higher; Adj Close is
                # already continuous, as data sources that publish raw closes do.
                for row in rows:
                    if row[0] < split_day:
                        row[1:5] = [round(value * ratio, 2) for value in row[1:5]]
                        row[5] = row[5] // ratio
                # The provider divides earlier prices by the ratio and multiplies volumes by it.
                stats_rows = []
                for row in rows:
                    if row[0] < split_day:
                        stats_rows.append([row[0]] + [round(value / ratio, 6) for value in row[1:5]] + [row[5] * ratio])
                    else:
                        stats_rows.append(list(row))
            write(file_name, "Date,Open,High,Low,Close,Adj Close,Volume", [
                f"{row[0].isoformat()},{fmt(row[1])},{fmt(row[2])},{fmt(row[3])},{fmt(row[4])},{adj:.6f},{row[5]}"
                for row, adj in zip(rows, adjusted)])
        elif style == "stooq-bulk":
            ticker = file_name[:-4].upper()
            write(file_name, "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>", [
                f"{ticker},D,{row[0].strftime('%Y%m%d')},000000,{row[1]},{row[2]},{row[3]},{row[4]},{row[5]},0"
                for row in rows])
        elif style == "stooq":
            write(file_name, "Date,Open,High,Low,Close,Volume", [
                f"{row[0].isoformat()},{row[1]},{row[2]},{row[3]},{row[4]},{row[5]}" for row in rows])
        else:
            write(file_name, "date,open,high,low,close,volume", [
                f"{row[0].isoformat()},{row[1]},{row[2]},{row[3]},{row[4]},{row[5]}" for row in rows])
        entry = statistics(stats_rows)
        entry.update({"name": name, "exchange": exchange, "currency": currency, "file": file_name})
        if style == "yahoo-split":
            entry["split"] = {"date": HOOL_SPLIT[0].isoformat(), "ratio": HOOL_SPLIT[1]}
        oracle[symbol] = entry
    with open(os.path.join(HERE, "symbols.csv"), "w", newline="") as handle:
        handle.write("symbol,name,exchange,currency\n")
        for symbol, name, exchange, currency, *_ in SYMBOLS:
            handle.write(f'{symbol},"{name}",{exchange},{currency}\n')
        for symbol, name, exchange, currency in HTTP_ONLY:
            handle.write(f'{symbol},"{name}",{exchange},{currency}\n')
    with open(os.path.join(HERE, "oracle.json"), "w") as handle:
        json.dump(oracle, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
