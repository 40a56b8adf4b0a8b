"""Northwind Outfitters' records (fictional): orders, their items and parcels, and the seed.

The seed's dates are relative to today, so a demo always has an order inside the 30-day
return window, one outside it, one in transit, one late, one not shipped yet and one split
shipment.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Item:
    """One line of an order."""

    sku: str
    """The stock number the tools use to name the item, e.g. NW-JKT-0142."""
    name: str
    """The product's name as the customer knows it."""
    colour: str
    """Its colour."""
    size: str
    """Its size ('' when it has none)."""
    price: float
    """Price of one, in pounds."""
    quantity: int = 1
    """How many were ordered."""
    backordered_until: dt.date | None = None
    """Set while the item waits for stock."""


@dataclass(frozen=True, slots=True)
class Shipment:
    """One parcel: who carries it and what happened to it."""

    carrier: str
    """Who carries it."""
    tracking_number: str
    """The carrier's tracking number."""
    skus: tuple[str, ...]
    """The items inside."""
    status: str
    """Where it is now, in words."""
    expected: dt.date | None
    """The expected delivery date, if the carrier gave one."""
    delivered: dt.date | None
    """When it was delivered; None until then."""
    events: tuple[tuple[dt.date, str, str], ...]
    """(date, what happened, where), oldest first."""


@dataclass(frozen=True, slots=True)
class Order:
    """One order as the store knows it."""

    id: str
    """The order number, NW- and five digits."""
    email: str
    """The address it was placed with (lower case)."""
    customer: str
    """The customer's name."""
    placed: dt.date
    """When it was placed."""
    status: str
    """Its status, in words."""
    items: tuple[Item, ...]
    """What was ordered."""
    payment: str
    """How it was paid, e.g. Visa card ending 4242."""
    delivery: str
    """The delivery option chosen."""
    shipments: tuple[Shipment, ...] = ()
    """Its parcels; none before it ships."""

    @property
    def total(self) -> float:
        """What the order cost."""
        return sum(item.price * item.quantity for item in self.items)

    def delivered_on(self, sku: str) -> dt.date | None:
        """When the item with `sku` was delivered; None while it has not been."""
        for shipment in self.shipments:
            if sku in shipment.skus:
                return shipment.delivered
        return None


def seed_orders(today: dt.date) -> list[Order]:
    """Ten orders around `today`: delivered, late, in transit, split, not shipped."""

    def ago(days: int) -> dt.date:
        return today - dt.timedelta(days=days)

    return [
        Order(
            "NW-10234", "sam.lee@example.com", "Sam Lee", ago(16), "delivered",
            (
                Item("NW-JKT-0142", "Harbour Rain Jacket", "navy", "M", 89.00),
                Item("NW-SCK-0310", "Merino Hiking Socks (2 pairs)", "charcoal", "L", 18.00),
            ),
            "Visa card ending 4242", "standard (3-5 working days)",
            (
                Shipment(
                    "Royal Mail", "RM482917365GB", ("NW-JKT-0142", "NW-SCK-0310"), "delivered",
                    ago(12), ago(12),
                    (
                        (ago(15), "Collected from the warehouse", "Leeds"),
                        (ago(14), "In transit", "Manchester mail centre"),
                        (ago(12), "Delivered, signed for by S. LEE", "Bristol"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-10432", "jo.baker@example.org", "Jo Baker", ago(11), "delivered",
            (
                Item("NW-SWT-0218", "Fell Wool Sweater", "oatmeal", "S", 74.00),
                Item("NW-CHN-0406", "Slim Chinos", "stone", "30/32", 49.00),
            ),
            "PayPal", "next-day",
            (
                Shipment(
                    "DPD", "15501234567890", ("NW-SWT-0218", "NW-CHN-0406"), "delivered",
                    ago(8), ago(8),
                    (
                        (ago(9), "Parcel collected", "Leeds hub"),
                        (ago(8), "Out for delivery", "Dublin depot"),
                        (ago(8), "Delivered to the front porch", "Dublin"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-20977", "priya.n@example.com", "Priya Nair", ago(52), "delivered",
            (Item("NW-SCF-0102", "Lambswool Scarf", "forest green", "", 32.00),),
            "Mastercard ending 5100", "standard (3-5 working days)",
            (
                Shipment(
                    "Royal Mail", "RM390118264GB", ("NW-SCF-0102",), "delivered", ago(47), ago(47),
                    (
                        (ago(50), "Collected from the warehouse", "Leeds"),
                        (ago(47), "Delivered through the letterbox", "Cambridge"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-31857", "sam.lee@example.com", "Sam Lee", ago(3), "in transit",
            (Item("NW-SHO-0733", "Trail Runner Shoes", "slate", "EU 42", 95.00),),
            "Visa card ending 4242", "standard (3-5 working days)",
            (
                Shipment(
                    "Evri", "H01HYA0012345678", ("NW-SHO-0733",), "in transit",
                    today + dt.timedelta(days=1), None,
                    (
                        (ago(2), "Collected from the warehouse", "Leeds"),
                        (ago(1), "At the regional hub", "Avonmouth"),
                        (ago(1), "In transit to the local courier", "Bristol"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-44120", "jo.baker@example.org", "Jo Baker", ago(9), "delayed",
            (Item("NW-BAG-0528", "Canvas Backpack 28L", "olive", "", 65.00),),
            "PayPal", "standard (3-5 working days)",
            (
                Shipment(
                    "Evri", "H01HYA0087654321", ("NW-BAG-0528",), "delayed at the sorting hub",
                    ago(4), None,
                    (
                        (ago(8), "Collected from the warehouse", "Leeds"),
                        (ago(6), "Held at the sorting hub: address label unreadable", "Rugby hub"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-58821", "alex.morgan@example.net", "Alex Morgan", ago(6), "delivered",
            (Item("NW-BOT-0911", "Ridge Leather Boots", "brown", "EU 43", 149.00),),
            "Amex card ending 1005", "standard (3-5 working days)",
            (
                Shipment(
                    "DPD", "15509876543210", ("NW-BOT-0911",), "delivered", ago(3), ago(3),
                    (
                        (ago(5), "Parcel collected", "Leeds hub"),
                        (ago(3), "Delivered, left with a neighbour at no. 14", "Glasgow"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-66310", "priya.n@example.com", "Priya Nair", ago(24), "delivered",
            (Item("NW-BOT-0874", "Chelsea Boots", "black", "EU 39", 129.00),),
            "Mastercard ending 5100", "standard (3-5 working days)",
            (
                Shipment(
                    "Royal Mail", "RM511902447GB", ("NW-BOT-0874",), "delivered", ago(20), ago(20),
                    (
                        (ago(23), "Collected from the warehouse", "Leeds"),
                        (ago(20), "Delivered, signed for by P. NAIR", "Cambridge"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-70214", "alex.morgan@example.net", "Alex Morgan", ago(1), "processing",
            (
                Item("NW-TSH-0120", "Organic Cotton T-shirt (3-pack)", "white", "M", 36.00),
                Item("NW-GIL-0615", "Quilted Gilet", "navy", "L", 79.00),
            ),
            "Gift card and Visa card ending 0007", "next-day",
        ),
        Order(
            "NW-18842", "priya.n@example.com", "Priya Nair", ago(5), "partly shipped",
            (
                Item("NW-SHT-0340", "Linen Shirt", "white", "M", 55.00),
                Item("NW-VST-0990", "Heated Vest", "black", "M", 139.00,
                     backordered_until=today + dt.timedelta(days=4)),
            ),
            "Mastercard ending 5100", "standard (3-5 working days)",
            (
                Shipment(
                    "DPD", "15500011223344", ("NW-SHT-0340",), "delivered", ago(1), ago(1),
                    (
                        (ago(3), "Parcel collected", "Leeds hub"),
                        (ago(1), "Delivered to the parcel locker", "Cambridge"),
                    ),
                ),
            ),
        ),
        Order(
            "NW-90112", "chris.evans@example.com", "Chris Evans", ago(2), "out for delivery",
            (Item("NW-JKT-0377", "Packable Down Jacket", "red", "L", 119.00),),
            "Visa card ending 9311", "next-day",
            (
                Shipment(
                    "Royal Mail", "RM620044871GB", ("NW-JKT-0377",), "out for delivery",
                    today, None,
                    (
                        (ago(1), "Collected from the warehouse", "Leeds"),
                        (today, "Out for delivery", "Cardiff delivery office"),
                    ),
                ),
            ),
        ),
    ]  # fmt: skip
