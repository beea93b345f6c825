"""One time format on every admin page: ISO-like 24-hour UTC times (``2026-12-03 09:57
UTC``), as the dashboards print them, instead of the en locale's ``Dec. 3, 2026, 9:57
a.m.``. Django reads this module first (``FORMAT_MODULE_PATH``); anything not set here
(input formats) falls back to Django's own en formats."""

DATETIME_FORMAT = "Y-m-d H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i"
