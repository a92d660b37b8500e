"""How the oracles write a time: the format the Calendar provider writes startDate/endDate in.

Shared by make-oracle.py and corpus-oracle.py (they import it from their own folder).
"""

import datetime


def render(value):
    """All-day values "YYYY-MM-DD"; floating times "YYYY-MM-DDTHH:MM:SS" (no offset); every other
    time its UTC instant "YYYY-MM-DDTHH:MM:SSZ"."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            return value.strftime("%Y-%m-%dT%H:%M:%S")
        return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.strftime("%Y-%m-%d")
