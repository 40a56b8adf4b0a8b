"""The support pack's store: Northwind Outfitters orders, returns and tickets."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from modes_tui.core.errors import ToolError
from modes_tui.core.packs.tools import load_module
from modes_tui.core.paths import shipped_dir
from modes_tui.core.tools.registry import Tool

# The store is the support pack's own tools module, loaded the way the pack loads it.
store_module = load_module("tools.py", shipped_dir("profiles") / "support")
OrderStore = store_module.OrderStore
normalise_order_id = store_module.normalise_order_id
order_tools = store_module.order_tools

TODAY = dt.date(2025, 3, 14)


@pytest.fixture
def store() -> Any:
    return OrderStore(today=TODAY)


@pytest.fixture
def tools(store: Any) -> dict[str, Tool]:
    return {t.name: t for t in order_tools(store)}


async def call(t: Tool, **arguments: Any) -> Any:
    assert t.check_arguments(arguments) is None, t.check_arguments(arguments)
    return await t.invoke(arguments)


@pytest.mark.parametrize("text", ["NW-10234", "nw10234", "#NW-10234", " 10234 ", "NW 10234"])
def test_order_numbers_are_normalised(text: str) -> None:
    assert normalise_order_id(text) == "NW-10234"


def test_not_an_order_number() -> None:
    assert normalise_order_id("order 12") is None


async def test_find_order_shows_items_and_the_return_window(tools: dict[str, Tool]) -> None:
    order = await call(tools["find_order"], order_id="10234")
    assert order["order_id"] == "NW-10234"
    assert order["status"] == "delivered"
    assert order["email"] == "s***@example.com"
    jacket = order["items"][0]
    assert jacket["sku"] == "NW-JKT-0142" and jacket["item"] == "Harbour Rain Jacket (navy, size M)"
    assert jacket["delivered"] == "2025-03-02"
    assert jacket["return_window_ends"] == "2025-04-01" and jacket["return_window_open"] is True
    assert order["total"] == "£107.00"


async def test_unknown_orders_are_errors_the_model_reads(tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolError, match="no order NW-99999"):
        await call(tools["find_order"], order_id="NW-99999")
    with pytest.raises(ToolError, match="not an order number"):
        await call(tools["find_order"], order_id="my blue one")


async def test_list_orders_by_email_newest_first(tools: dict[str, Tool]) -> None:
    listed = await call(tools["list_orders"], email=" Priya.N@example.com ")
    assert [o["order_id"] for o in listed["orders"]] == ["NW-18842", "NW-66310", "NW-20977"]
    with pytest.raises(ToolError, match="no orders were found"):
        await call(tools["list_orders"], email="nobody@example.com")


async def test_track_shipment_covers_transit_delay_split_and_unshipped(
    tools: dict[str, Tool],
) -> None:
    moving = await call(tools["track_shipment"], order_id="NW-31857")
    assert moving["parcels"][0]["expected_delivery"] == "2025-03-15"
    late = await call(tools["track_shipment"], order_id="NW-44120")
    assert late["status"] == "delayed" and "unreadable" in late["parcels"][0]["events"][-1]["event"]
    split = await call(tools["track_shipment"], order_id="NW-18842")
    assert split["parcels"][0]["items"] == ["Linen Shirt"]
    assert split["not_shipped"] == ["Heated Vest: backordered, expected to ship 2025-03-18"]
    waiting = await call(tools["track_shipment"], order_id="NW-70214")
    assert waiting["status"] == "processing" and "not shipped yet" in waiting["note"]


async def test_a_return_inside_the_window_issues_a_label(
    tools: dict[str, Tool], store: Any
) -> None:
    created = await call(
        tools["create_return"], order_id="NW-10432", item="NW-SWT-0218", reason="too small"
    )
    assert created["return_id"] == "RMA-50001"
    assert created["label"].endswith("/RMA-50001")
    assert created["refund_to"] == "PayPal"
    assert created["send_by"] == "2025-03-28"
    again = tools["create_return"]
    with pytest.raises(ToolError, match="already exists"):
        await call(again, order_id="NW-10432", item="Fell Wool Sweater", reason="too small")
    order = await call(tools["find_order"], order_id="NW-10432")
    assert order["returns"][0]["return_id"] == "RMA-50001"


async def test_the_30_day_window_applies_to_unworn_items_only(tools: dict[str, Tool]) -> None:
    with pytest.raises(ToolError, match="30-day return window for NW-20977 ended on 2025-02-25"):
        await call(tools["create_return"], order_id="NW-20977", item="scarf", reason="changed mind")
    faulty = await call(
        tools["create_return"],
        order_id="NW-20977",
        item="scarf",
        reason="seam came apart",
        condition="faulty",
    )
    assert faulty["status"] == "label issued"


async def test_returns_need_a_delivered_item_and_exchanges_a_target(
    tools: dict[str, Tool],
) -> None:
    with pytest.raises(ToolError, match="not been delivered yet"):
        await call(tools["create_return"], order_id="NW-31857", item="NW-SHO-0733", reason="x")
    with pytest.raises(ToolError, match="needs exchange_for"):
        await call(
            tools["create_return"],
            order_id="NW-58821",
            item="NW-BOT-0911",
            reason="too big",
            resolution="exchange",
        )
    with pytest.raises(ToolError, match="has no item 'hat'"):
        await call(tools["create_return"], order_id="NW-58821", item="hat", reason="x")
    exchange = await call(
        tools["create_return"],
        order_id="NW-58821",
        item="NW-BOT-0911",
        reason="too big",
        resolution="exchange",
        exchange_for="EU 42",
    )
    assert exchange["exchange_for"] == "EU 42"


async def test_create_ticket_opens_a_numbered_ticket(tools: dict[str, Tool]) -> None:
    ticket = await call(
        tools["create_ticket"],
        summary="Customer reports a burn from the heated vest, order NW-18842.",
        priority="urgent",
        order_id="nw18842",
    )
    assert ticket["ticket_id"] == "TCK-70001"
    assert ticket["order_id"] == "NW-18842"
    assert ticket["first_response"] == "within 2 hours"
    assert tools["create_ticket"].check_arguments({"summary": "x", "priority": "asap"}) is not None
