"""The support pack's own tools: Northwind Outfitters' (fictional) order store.

The pack's router.yaml names `make_tools` (`tools: [python:tools.py:make_tools]`), so every
session gets a fresh in-memory store seeded from `seed.py`; returns and tickets created in a
session are kept in memory only. The tools (`find_order`, `list_orders`, `track_shipment`,
`create_return`, `create_ticket`) report problems the customer can fix as `ToolError`.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.registry import Tool, tool

from .seed import Item, Order, seed_orders

STORE_NAME = "Northwind Outfitters"
RETURN_WINDOW_DAYS = 30
RETURN_SEND_BY_DAYS = 14
ORDER_ID = re.compile(r"^(?:NW)?-?(\d{5})$")

Condition = Literal["unworn", "faulty", "damaged", "wrong_item"]
Resolution = Literal["refund", "exchange", "store_credit"]
Priority = Literal["urgent", "high", "normal"]


@dataclass
class OrderStore:
    """The store's orders (seeded relative to `today`), returns and tickets."""

    today: dt.date = field(default_factory=dt.date.today)
    orders: dict[str, Order] = field(default_factory=dict)
    returns: list[dict[str, Any]] = field(default_factory=list)
    tickets: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.orders:
            self.orders = {order.id: order for order in seed_orders(self.today)}
        self._lock = threading.Lock()
        self._return_ids = itertools.count(50001)
        self._ticket_ids = itertools.count(70001)

    # -- lookups

    def order(self, order_id: str) -> Order:
        """The order with this number (NW-10234, 10234, #nw10234); ToolError if none."""
        key = normalise_order_id(order_id)
        if key is None:
            raise ToolError(
                f"{order_id!r} is not an order number; they look like NW-10234 (NW- and five digits)"
            )
        found = self.orders.get(key)
        if found is None:
            raise ToolError(f"no order {key} was found; ask the customer to check the number")
        return found

    def by_email(self, email: str) -> list[Order]:
        """The orders placed with `email`, newest first; ToolError if none."""
        wanted = email.strip().lower()
        if "@" not in wanted:
            raise ToolError(f"{email!r} is not an email address")
        found = [o for o in self.orders.values() if o.email == wanted]
        if not found:
            raise ToolError(f"no orders were found for {wanted}; ask the customer to check it")
        return sorted(found, key=lambda o: o.placed, reverse=True)

    # -- changes

    def create_return(
        self,
        order_id: str,
        item: str,
        reason: str,
        condition: Condition,
        resolution: Resolution,
        exchange_for: str | None,
    ) -> dict[str, Any]:
        order = self.order(order_id)
        line = _find_item(order, item)
        delivered = order.delivered_on(line.sku)
        if delivered is None:
            raise ToolError(
                f"{line.name} from {order.id} has not been delivered yet, so it cannot be "
                "returned; once it arrives it can be"
            )
        window_ends = delivered + dt.timedelta(days=RETURN_WINDOW_DAYS)
        if condition == "unworn" and self.today > window_ends:
            raise ToolError(
                f"the {RETURN_WINDOW_DAYS}-day return window for {order.id} ended on "
                f"{window_ends.isoformat()} (delivered {delivered.isoformat()}); faulty, damaged "
                "or wrong items can still be returned, otherwise offer to pass it to a colleague"
            )
        if resolution == "exchange" and not (exchange_for and exchange_for.strip()):
            raise ToolError("an exchange needs exchange_for: the size or colour wanted instead")
        if not reason.strip():
            raise ToolError("give the reason for the return in the customer's words")
        with self._lock:
            if any(r["order_id"] == order.id and r["sku"] == line.sku for r in self.returns):
                raise ToolError(f"a return for {line.name} on {order.id} already exists")
            number = f"RMA-{next(self._return_ids)}"
            created = {
                "return_id": number,
                "order_id": order.id,
                "sku": line.sku,
                "item": _describe_item(line),
                "reason": reason.strip(),
                "condition": condition,
                "resolution": resolution,
                "status": "label issued",
                "label": f"https://returns.northwind-outfitters.example/label/{number}",
                "send_by": (self.today + dt.timedelta(days=RETURN_SEND_BY_DAYS)).isoformat(),
                "drop_off": "any Post Office or Evri ParcelShop; the label is prepaid",
            }
            if resolution == "exchange":
                created["exchange_for"] = str(exchange_for).strip()
                created["next_step"] = "the replacement ships when the return is scanned"
            elif resolution == "store_credit":
                created["next_step"] = (
                    "store credit is issued by email within 2 working days of arrival"
                )
            else:
                created["refund_to"] = order.payment
                created["next_step"] = (
                    "the refund goes to the original payment method within 5 working days "
                    "of the item arriving back"
                )
            self.returns.append(created)
        return created

    def create_ticket(
        self,
        summary: str,
        priority: Priority,
        order_id: str | None,
        contact: str | None,
    ) -> dict[str, Any]:
        if not summary.strip():
            raise ToolError(
                "the ticket needs a summary of what happened and what the customer wants"
            )
        order = self.order(order_id).id if order_id else None
        response = {
            "urgent": "within 2 hours",
            "high": "within 1 working day",
            "normal": "within 2 working days",
        }
        queue = {
            "urgent": "safety and fraud",
            "high": "customer care leads",
            "normal": "customer care",
        }
        with self._lock:
            number = f"TCK-{next(self._ticket_ids)}"
            created = {
                "ticket_id": number,
                "status": "open",
                "priority": priority,
                "queue": queue[priority],
                "first_response": response[priority],
                "summary": " ".join(summary.split()),
                "order_id": order,
                "contact": contact,
            }
            self.tickets.append(created)
        return created


def normalise_order_id(text: str) -> str | None:
    """`NW-10234` from `nw10234`, `#NW-10234`, ` 10234 `; None when it is not one."""
    match = ORDER_ID.match(re.sub(r"[\s#]", "", text).upper())
    return f"NW-{match.group(1)}" if match else None


def _find_item(order: Order, wanted: str) -> Item:
    key = wanted.strip().lower()
    for line in order.items:
        if line.sku.lower() == key:
            return line
    named = [line for line in order.items if key and key in line.name.lower()]
    if len(named) == 1:
        return named[0]
    choices = "; ".join(f"{line.sku} ({line.name})" for line in order.items)
    if named:
        raise ToolError(f"{wanted!r} matches several items of {order.id}; use the SKU: {choices}")
    raise ToolError(f"{order.id} has no item {wanted!r}; its items are: {choices}")


def _money(amount: float) -> str:
    return f"£{amount:,.2f}"


def _describe_item(item: Item) -> str:
    details = ", ".join(d for d in (item.colour, f"size {item.size}" if item.size else "") if d)
    return f"{item.name} ({details})" if details else item.name


def _mask(email: str) -> str:
    name, _, domain = email.partition("@")
    return f"{name[:1]}***@{domain}"


def _order_view(store: OrderStore, order: Order) -> dict[str, Any]:
    items = []
    for line in order.items:
        entry: dict[str, Any] = {
            "sku": line.sku,
            "item": _describe_item(line),
            "quantity": line.quantity,
            "price": _money(line.price),
        }
        delivered = order.delivered_on(line.sku)
        if line.backordered_until is not None:
            entry["status"] = f"backordered, expected to ship {line.backordered_until.isoformat()}"
        elif delivered is not None:
            ends = delivered + dt.timedelta(days=RETURN_WINDOW_DAYS)
            entry["delivered"] = delivered.isoformat()
            entry["return_window_ends"] = ends.isoformat()
            entry["return_window_open"] = store.today <= ends
        items.append(entry)
    view: dict[str, Any] = {
        "order_id": order.id,
        "placed": order.placed.isoformat(),
        "status": order.status,
        "customer": order.customer,
        "email": _mask(order.email),
        "items": items,
        "total": _money(order.total),
        "payment": order.payment,
        "delivery": order.delivery,
    }
    existing = [r for r in store.returns if r["order_id"] == order.id]
    if existing:
        view["returns"] = [
            {k: r[k] for k in ("return_id", "item", "status", "resolution")} for r in existing
        ]
    return view


def order_tools(store: OrderStore) -> list[Tool]:
    """find_order, list_orders, track_shipment, create_return and create_ticket over `store`."""

    @tool
    def find_order(order_id: str) -> dict[str, Any]:
        """Look up one order: items (with SKUs), status, payment, delivery and return window.

        Args:
            order_id: The order number, e.g. NW-10234.
        """
        return _order_view(store, store.order(order_id))

    @tool
    def list_orders(email: str) -> dict[str, Any]:
        """List the orders placed with an email address, newest first.

        Args:
            email: The email address used for the orders.
        """
        orders = store.by_email(email)
        return {
            "email": email.strip().lower(),
            "orders": [
                {
                    "order_id": order.id,
                    "placed": order.placed.isoformat(),
                    "status": order.status,
                    "items": ", ".join(line.name for line in order.items),
                    "total": _money(order.total),
                }
                for order in orders
            ],
        }

    @tool
    def track_shipment(order_id: str) -> dict[str, Any]:
        """Where an order's parcels are: carrier, tracking number, events, expected delivery.

        Args:
            order_id: The order number, e.g. NW-10234.
        """
        order = store.order(order_id)
        if not order.shipments:
            return {
                "order_id": order.id,
                "status": order.status,
                "note": "not shipped yet; orders usually leave the warehouse within 1 working day",
            }
        names = {line.sku: line.name for line in order.items}
        parcels = []
        for shipment in order.shipments:
            parcel: dict[str, Any] = {
                "carrier": shipment.carrier,
                "tracking_number": shipment.tracking_number,
                "status": shipment.status,
                "items": [names[sku] for sku in shipment.skus],
                "events": [
                    {"date": day.isoformat(), "event": text, "location": place}
                    for day, text, place in shipment.events
                ],
            }
            if shipment.delivered is not None:
                parcel["delivered"] = shipment.delivered.isoformat()
            elif shipment.expected is not None:
                parcel["expected_delivery"] = shipment.expected.isoformat()
            parcels.append(parcel)
        waiting = [
            f"{line.name}: backordered, expected to ship {line.backordered_until.isoformat()}"
            for line in order.items
            if line.backordered_until is not None
        ]
        result: dict[str, Any] = {"order_id": order.id, "status": order.status, "parcels": parcels}
        if waiting:
            result["not_shipped"] = waiting
        return result

    @tool
    def create_return(
        order_id: str,
        item: str,
        reason: str,
        condition: Condition = "unworn",
        resolution: Resolution = "refund",
        exchange_for: str | None = None,
    ) -> dict[str, Any]:
        """Start a return for one item of a delivered order and issue a prepaid label.

        Unworn items can be returned within 30 days of delivery; faulty, damaged or wrong
        items at any time. Only call this after the customer confirmed the item and reason.

        Args:
            order_id: The order number, e.g. NW-10234.
            item: The item's SKU from find_order (or its exact name).
            reason: Why it goes back, in the customer's words.
            condition: unworn, faulty, damaged, or wrong_item (sent the wrong thing).
            resolution: refund, exchange, or store_credit.
            exchange_for: For an exchange, the size or colour wanted instead.
        """
        return store.create_return(order_id, item, reason, condition, resolution, exchange_for)

    @tool
    def create_ticket(
        summary: str,
        priority: Priority,
        order_id: str | None = None,
        contact: str | None = None,
    ) -> dict[str, Any]:
        """Hand the case to a human colleague: open a support ticket.

        Args:
            summary: A short factual summary: who, what happened, when, which order, what the customer wants.
            priority: urgent (injury, safety, fraud, account misuse), high (legal, chargeback, data request, repeated failed contacts) or normal.
            order_id: The order concerned, if any.
            contact: How the customer wants to be contacted (email or phone), if they said.
        """
        return store.create_ticket(summary, priority, order_id, contact)

    return [find_order, list_orders, track_shipment, create_return, create_ticket]


def make_tools() -> list[Tool]:
    """The store's tools over a fresh store: called once for every session."""
    return order_tools(OrderStore())
