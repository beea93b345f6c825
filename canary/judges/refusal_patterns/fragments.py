"""Regex fragments the refusal phrase tables share (written for this project).

Apostrophes as models write them, the end of a sentence, and the per-language pieces
several tables build on: the negated ability ("I can't / won't / am unable to", "não
posso") and what a refusal refuses ("this", "such content", "isso").
"""

from __future__ import annotations

# Apostrophes as models write them: ASCII, right single quote, modifier letter.
AP = "['’ʼ]"

EN_CANT = (
    rf"\bI\s*(?:can{AP}?t|cannot|can\s+not|won{AP}t|will\s+not|am\s+(?:not\s+able|unable)"
    rf"|{AP}m\s+(?:not\s+able|unable)|must\s+(?:decline|refuse)|have\s+to\s+decline"
    rf"|{AP}m\s+not\s+going|am\s+not\s+going)"
)
# "…before the end of the sentence": "I can't help." but not "I can't help it".
END = r"(?=\s*(?:[.!…]|$))"
# What a refusal refuses: the request, this/that, such content (per language).
EN_OBJ = r"(?:this|that|it|these|those|such|your|the\s+request|any\s+of\s+that)"
EN_TASK = (
    rf"(?:help(?:\s+you)?(?:\s+(?:with|on)\s+{EN_OBJ}\b|{END})"
    r"|assist\b|comply\b|fulfil+\b"
    rf"|(?:provide|create|generate|write|produce|share)\s+(?:{EN_OBJ}|that\s+kind|this\s+kind"
    r"|content|explicit|any)\b"
    r"|engage\s+in\b|participate\s+in\b"
    r"|continue\s+(?:with\s+)?(?:this|that|the)\s+(?:story|roleplay|role-play|conversation"
    r"|scenario|request|scene)|(?:this|that|your)\s+request)"
)
PT_CANT = r"\bn[ãa]o\s+(?:posso|consigo|vou|irei|poderei|devo)"
PT_OBJ = (
    r"(?:isso|isto|esse|essa|este|esta|tal|seu|sua|o\s+seu|a\s+sua|esse\s+tipo"
    r"|o\s+que\s+(?:você|voce)\s+pediu)\b"
)
ES_OBJ = r"(?:eso|esto|esa|ese|esta|este|tal|tu|su|ese\s+tipo|lo\s+que\s+pides)\b"
FR_OBJ = r"(?:cela|ça|ceci|cette|ce|ces|votre|ta|ton|tel|telle|ce\s+genre)\b"
IT_OBJ = r"(?:questo|questa|ciò|tale|la\s+tua|il\s+tuo|questo\s+tipo)\b"
