"""The shipped ``invoice-extract@1`` output as a client writes it: pydantic models the
openai SDK turns into the contract's JSON Schema (``chat.completions.parse``,
``pydantic_function_tool``). One definition for every test that sends it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LineItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str
    amount: float


class Invoice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    currency: str
    total: float
    line_items: list[LineItem]
